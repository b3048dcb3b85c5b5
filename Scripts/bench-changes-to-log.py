#!/usr/bin/env python3
"""Converts ../shared/bench/gen_records.py --changes events to Ferry's change log (Docs/ChangeLogFormat.md),
for Scripts/kill-test and Scripts/kill-test-store: upserts and modifications become recordSaved,
deletions recordDeleted, and every 1000 events (and at the end) each zone touched since the last
checkpoint gets a checkpoint with the token `<zoneName>@<N>` (N the latest event token) — the
mapping of Benchmarks' ferry-bench-changes, without building the benchmark package.

    Scripts/bench-changes-to-log.py INPUT OUTPUT
"""
import json
import sys

CHECKPOINT_EVERY = 1000


def main(source, target):
    touched = []
    last_token = 0
    count = 0
    compact = {"separators": (",", ":"), "ensure_ascii": False}
    with open(source, encoding="utf-8") as lines, open(target, "w", encoding="utf-8") as out:
        def checkpoint():
            for zone in touched:
                out.write(json.dumps({"event": "checkpoint", "zoneID": zone,
                                      "syncToken": f"{zone['zoneName']}@{last_token}", "moreComing": False}, **compact) + "\n")
            touched.clear()

        for line in lines:
            if not line.strip():
                continue
            event = json.loads(line)
            last_token = event.get("token", last_token)
            zone = event.get("zoneID") or {"zoneName": "_defaultZone"}
            if event["op"] == "delete":
                deleted = {"event": "recordDeleted", "recordName": event["recordName"], "zoneID": zone}
                if event.get("recordType") is not None:
                    deleted["recordType"] = event["recordType"]
                out.write(json.dumps(deleted, **compact) + "\n")
            else:
                out.write(json.dumps({"event": "recordSaved", "record": event["record"]}, **compact) + "\n")
            if zone not in touched:
                touched.append(zone)
            count += 1
            if count % CHECKPOINT_EVERY == 0:
                checkpoint()
        checkpoint()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
