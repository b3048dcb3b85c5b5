#!/usr/bin/env python3
"""Saves every page of a database's changes, as a CKWS server answers them, to a folder.

    save_changes_pages.py URL CONTAINER OUT_DIR [PAGE_SIZE]

URL is the server (http://127.0.0.1:8080). Fetches changes/database, then changes/zone for each
zone, every page (moreComing), PAGE_SIZE records a page (default 200), and writes each answer's
bytes, unchanged (pretty-printed as served), to OUT_DIR/page-NNNNNN.json: the pages `ferry pull`
fetches, saved as a user saves them, for `ferry convert OUT_DIR` to read from disk.
"""
import json
import os
import sys
import urllib.request


def post(url, body):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return response.read()


def main():
    server, container, out = sys.argv[1], sys.argv[2], sys.argv[3]
    size = int(sys.argv[4]) if len(sys.argv) > 4 else 200
    base = f"{server}/database/1/{container}/development/private/"
    os.makedirs(out, exist_ok=True)
    zones = json.loads(post(base + "changes/database", {}))["zones"]
    count = 0
    for zone in zones:
        token = None
        while True:
            request = {"zoneID": zone["zoneID"], "resultsLimit": size}
            if token:
                request["syncToken"] = token
            body = post(base + "changes/zone", {"zones": [request]})
            with open(os.path.join(out, "page-%06d.json" % count), "wb") as page:
                page.write(body)
            count += 1
            entry = json.loads(body)["zones"][0]
            token = entry.get("syncToken")
            if not entry.get("moreComing"):
                break
    print(count)


if __name__ == "__main__":
    main()
