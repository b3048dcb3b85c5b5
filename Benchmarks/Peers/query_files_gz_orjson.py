#!/usr/bin/env python3
"""Peer for saved records/query responses gzipped one by one (*.json.gz): ../shared/bench/peers/
query_files_orjson.py with one line changed, `open` -> `gzip.open` (and `gzip` imported): read each
file of DIR (sorted), decompressed, and write every record as one compact NDJSON line.
Usage: query_files_gz_orjson.py DIR OUT"""
import gzip, orjson, os, sys
d, out = sys.argv[1], sys.argv[2]
with open(out, 'wb') as g:
    for name in sorted(os.listdir(d)):
        with gzip.open(os.path.join(d, name), 'rb') as f:
            doc = orjson.loads(f.read())
        for r in doc['records']:
            g.write(orjson.dumps(r)); g.write(b'\n')
