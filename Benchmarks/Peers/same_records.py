#!/usr/bin/env python3
"""Whether two NDJSON files hold the same records: an order-independent comparison of the parsed
JSON of their lines (a multiset of per-line blake2b digests of a canonical form), so that tools may
order keys, spell numbers (1.0, 1, 1e0) and escape strings differently. Blank lines are ignored.
Usage: same_records.py A B; exit 0 when the same, 1 when not."""
import hashlib
import json
import sys


def number(text):
    value = float(text)
    return int(value) if value.is_integer() and abs(value) < 2 ** 63 else value


def digest(path):
    acc, n = 0, 0
    with open(path, "rb") as f:
        for line in f:
            if not line.strip():
                continue
            value = json.loads(line, parse_float=number)
            canonical = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
            acc = (acc + int.from_bytes(hashlib.blake2b(canonical.encode(), digest_size=16).digest(), "little")) % (1 << 128)
            n += 1
    return n, acc


a, b = digest(sys.argv[1]), digest(sys.argv[2])
print("records", a[0], b[0], "SAME RECORDS" if a == b else "DIFFERENT")
sys.exit(0 if a == b else 1)
