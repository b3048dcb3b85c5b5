#!/usr/bin/env python3
"""Peer for filtering saved records/query responses: ../shared/bench/peers/query_files_orjson.py
(each file of DIR, sorted) with the record test of ../shared/bench/peers/filter_orjson.py:
recordType == "Message" AND fields.count.value > 50 AND fields.text.value CONTAINS[c] "hello".
Writes each matching record as one compact NDJSON line. Usage: query_files_filter_orjson.py DIR OUT"""
import orjson, os, sys
d, out = sys.argv[1], sys.argv[2]
loads, dumps = orjson.loads, orjson.dumps
n = m = 0
with open(out, 'wb', buffering=1 << 20) as g:
    w = g.write
    for name in sorted(os.listdir(d)):
        with open(os.path.join(d, name), 'rb') as f:
            doc = loads(f.read())
        for r in doc['records']:
            n += 1
            if r.get("recordType") != "Message":
                continue
            fields = r.get("fields") or {}
            c = (fields.get("count") or {}).get("value")
            if not isinstance(c, (int, float)) or isinstance(c, bool) or not c > 50:
                continue
            t = (fields.get("text") or {}).get("value")
            if isinstance(t, str) and "hello" in t.casefold():
                w(dumps(r)); w(b'\n')
                m += 1
print(n, m, file=sys.stderr)
