#!/usr/bin/env python3
"""Writes the seed corpora (Fuzz/Corpus/<harness>/) from Samples/ and tiny generated inputs.

Run from anywhere: python3 Fuzz/make-corpus.py. The output is committed; rerun after changing
this script (it replaces the folders it writes). Seeds stay small: every file is at most 8 KiB.
"""
import gzip
import io
import json
import os
import shutil
import tarfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "Fuzz", "Corpus")
LIMIT = 8192


def sample_lines(name, count=None):
    with open(os.path.join(ROOT, "Samples", name), "rb") as f:
        lines = [line for line in f.read().split(b"\n") if line.strip() and len(line) < LIMIT]
    return lines[:count] if count else lines


def sample(name):
    with open(os.path.join(ROOT, "Samples", name), "rb") as f:
        return f.read()


def write(harness, seeds):
    folder = os.path.join(CORPUS, harness)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    for index, seed in enumerate(seeds):
        if isinstance(seed, str):
            seed = seed.encode()
        assert len(seed) <= LIMIT, (harness, index, len(seed))
        with open(os.path.join(folder, "seed-%03d" % index), "wb") as f:
            f.write(seed)


def dumps(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


RECORD = {"recordName": "m1", "recordType": "Message", "zoneID": {"zoneName": "Chats", "ownerRecordName": "_o"},
          "recordChangeTag": "t1", "created": {"timestamp": 1700000000000, "userRecordName": "_u"}, "deleted": False,
          "fields": {"text": {"value": "Hi <you> & \"me\" \u00e9\u0301 \U0001F600", "type": "STRING"},
                     "count": {"value": 2, "type": "INT64"}, "score": {"value": 0.5, "type": "DOUBLE"},
                     "sentAt": {"value": 1700000000123, "type": "TIMESTAMP"},
                     "chat": {"value": {"recordName": "c1", "action": "DELETE_SELF"}, "type": "REFERENCE"},
                     "tags": {"value": ["a", "b"], "type": "STRING_LIST"},
                     "where": {"value": {"latitude": 47.37, "longitude": 8.54, "altitude": 408.0}, "type": "LOCATION"},
                     "blob": {"value": "aGVsbG8=", "type": "BYTES"},
                     "photo": {"value": {"fileChecksum": "abc", "size": 3, "downloadURL": "https://x/y"}, "type": "ASSETID"},
                     "nums": {"value": [1, 2.5, -3], "type": "DOUBLE_LIST"}}}
TINY = {"recordName": "a", "fields": {}}
DELETED = {"recordName": "gone", "recordType": "Message", "deleted": True}
ERROR = {"recordName": "x", "serverErrorCode": "NOT_FOUND", "reason": "missing"}

records = [RECORD, TINY, DELETED, {"recordName": "n", "recordType": "Note", "fields": {"x": {"value": None}}}]
line_seeds = [dumps(r) for r in records] + sample_lines("edge-cases.ndjson") + sample_lines("chat.ndjson", 3) \
    + sample_lines("shopping.ndjson", 3)
write("record-line", line_seeds)

responses = [
    sample("query-response.json"), sample("lookup-response-with-error.json"),
    dumps({"records": records + [ERROR], "continuationMarker": "cm"}),                       # records/query
    dumps({"records": [RECORD, ERROR]}),                                                   # records/lookup
    dumps({"records": [RECORD, DELETED]}),                                                 # records/modify
    dumps({"records": [RECORD, DELETED], "syncToken": "t2", "moreComing": False}),         # records/changes
    dumps({"zones": [{"zoneID": {"zoneName": "Chats"}, "records": [TINY, DELETED], "syncToken": "z1",
                      "moreComing": True}]}),                                               # changes/zone
    dumps({"zones": [{"zoneID": {"zoneName": "Chats"}, "deleted": True}, {"zoneID": {"zoneName": "Old"}, "purged": True}],
           "syncToken": "d1", "moreComing": False}),                                       # changes/database
    dumps({"zones": [{"zoneID": {"zoneName": "Chats", "ownerRecordName": "_o"}, "syncToken": "s"}]}),  # zones/list
    dumps({"zones": [{"zoneID": {"zoneName": "Chats"}, "serverErrorCode": "ZONE_NOT_FOUND"}]}),       # zones/lookup
    json.dumps({"records": [TINY, RECORD]}, indent=2),                                     # pretty-printed
    dumps([{"records": [TINY]}, {"records": [DELETED]}]),
    dumps(ERROR),
]
write("responses", responses)

history = sample_lines("chat-history.ndjson")
changelog = [b"\n".join(history[:n]) + b"\n" for n in (2, 4)] + history[:6] + [
    "\n".join(dumps(e) for e in [
        {"event": "zoneSaved", "zoneID": {"zoneName": "Z"}},
        {"event": "recordSaved", "record": {**TINY, "zoneID": {"zoneName": "Z"}}},
        {"event": "recordDeleted", "recordName": "a", "zoneID": {"zoneName": "Z"}, "recordType": "T"},
        {"event": "checkpoint", "syncToken": "t1", "zoneID": {"zoneName": "Z"}},
        {"event": "zoneDeleted", "zoneID": {"zoneName": "Z"}},
        {"event": "zonePurged", "zoneID": {"zoneName": "Z"}}]),
    dumps({"records": [TINY, DELETED], "syncToken": "t2", "moreComing": False}) + "\n"
    + dumps({"records": [RECORD], "syncToken": "t3", "moreComing": False}),
    dumps({"zones": [{"zoneID": {"zoneName": "Chats"}, "records": [TINY, {**DELETED, "recordName": "a"}],
                      "syncToken": "z1", "moreComing": False}]}),
    dumps({"zones": [{"zoneID": {"zoneName": "Chats"}, "deleted": True}], "syncToken": "d1"}),
    json.dumps({"records": [TINY, {**RECORD, "recordName": "c1"}], "syncToken": "t9"}, indent=1),
    dumps([{"records": [TINY], "syncToken": "a"}, {"records": [ERROR], "syncToken": "b"}]),
]
write("changelog", changelog)

predicates = [
    'text == "Hi"', 'count > 3 AND score <= 0.5', 'NOT (count BETWEEN {1, 10}) OR tags CONTAINS "a"',
    'text BEGINSWITH[cd] "h\u00e9"', 'text LIKE[c] "h*?"', 'text MATCHES "^h.*$"', 'ANY tags IN {"a", "b"}',
    'sentAt > CAST(7e8, "NSDate")', 'chat == "c1"', 'recordName ENDSWITH "1"', 'TRUEPREDICATE', 'FALSEPREDICATE',
    'distanceToLocation:fromLocation:(where, $here) < 1000', 'SUBQUERY(tags, $t, $t == "a").@count > 0',
    'count + 2 * 3 >= -1.5e3', 'tags[FIRST] == "a" && tags[SIZE] != 0', '"x" IN tags', 'text == nil',
    'zoneName == "Chats" AND recordType == "Message"', 'creationDate < modificationDate', 'f1 == 9007199254740993',
    'f0 ==[c] "kelvin" OR f2 CONTAINS[d] "e"', 'f4 >= CAST(631152000, "NSDate")', 'f3 == "Kelvin"', 'self.text == %@',
    'count IN {1, 2, 3}', 'text CONTAINS "\\u00e9"', "text == 'single'", 'lastModifiedUserRecordID == "_u"',
    # Regressions: traps found by hand (INT64.min % -1, a double beyond INT64 made an integer).
    'modulus:by:(-9223372036854775808, -1) == 0', 'FUNCTION(1e300, "intValue") == 0', 'text MATCHES "(H)(i)"',
]
write("predicate", predicates)
write("store-sql", predicates + ['f1 > 50', 'f1 == -0.0', 'f0 == "stra\u00dfe"', 'ANY f2 == "hello"', 'f5 CONTAINS 3',
                                 'f0 BEGINSWITH "r"', 'recordName BEGINSWITH "r1"', 'NOT f0 == "a;b"'])

# serve: byte 0 picks the endpoint (the order of Fuzz/Sources/serve's `operations`, then the upload
# and download URLs), byte 1 the database (0 private, 1 public, 2 shared; +0x80 for GET); the body.
SERVE_OPERATIONS = ["records/query", "records/lookup", "records/modify", "records/changes", "changes/zone",
                    "changes/database", "zones/changes", "zones/list", "zones/lookup", "zones/modify", "assets/upload",
                    "upload", "download"]
chats = {"zoneName": "Chats"}
serve_bodies = {
    "records/query": [{"query": {"recordType": "Message"}},
                      {"zoneID": chats, "resultsLimit": 2, "query": {"recordType": "Note", "filterBy": [
                          {"comparator": "GREATER_THAN", "fieldName": "count", "fieldValue": {"value": 3, "type": "INT64"}}],
                          "sortBy": [{"fieldName": "count", "ascending": False}]}, "desiredKeys": ["text"]},
                      {"query": {"recordType": "Message", "filterBy": [{"comparator": "LIST_CONTAINS", "fieldName": "tags",
                                                                          "fieldValue": {"value": "a"}}]},
                       "numbersAsStrings": True, "continuationMarker": "x"}],
    "records/lookup": [{"records": [{"recordName": "r0"}, {"recordName": "nope"}]},
                       {"zoneID": chats, "records": [{"recordName": "r1"}], "desiredKeys": ["count"]}],
    "records/modify": [{"operations": [{"operationType": "create", "record": {"recordName": "new", "recordType": "Message",
                                                                               "fields": {"count": {"value": 1, "type": "INT64"}}}}]},
                       {"zoneID": chats, "atomic": False, "operations": [
                           {"operationType": "update", "record": {"recordName": "r1", "recordChangeTag": "stale", "fields": {}}},
                           {"operationType": "forceUpdate", "record": {"recordName": "r4", "recordType": "Note", "fields": {
                               "text": {"value": "x", "type": "STRING"}}}},
                           {"operationType": "forceDelete", "record": {"recordName": "r7"}}]},
                       {"operations": [{"operationType": "forceReplace", "record": {"recordName": "a", "recordType": "Photo",
                           "fields": {"image": {"value": {"receipt": "r", "size": 1}, "type": "ASSETID"}}}}]}],
    "records/changes": [{"zoneID": chats}, {"resultsLimit": 1, "desiredRecordTypes": ["Note"]}],
    "changes/zone": [{"zones": [{"zoneID": chats}, {"zoneID": {"zoneName": "Nope"}, "resultsLimit": 1}]}],
    "changes/database": [{}, {"syncToken": "bad"}],
    "zones/changes": [{}, {"metaSyncToken": "bad"}],
    "zones/list": [{}],
    "zones/lookup": [{"zones": [{"zoneName": "Chats"}, {"zoneName": "_defaultZone"}, {"zoneName": "Nope"}]}],
    "zones/modify": [{"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "Z"}}},
                                     {"operationType": "delete", "zone": {"zoneID": {"zoneName": "Other"}}}]}],
    "assets/upload": [{"tokens": [{"recordName": "a", "recordType": "Photo", "fieldName": "image"}]}],
}
serve = []
for index, operation in enumerate(SERVE_OPERATIONS):
    if operation == "upload":
        serve.append(bytes([index, 0]) + bytes(range(256)))
    elif operation == "download":
        serve.append(bytes([index, 0x80]) + b"0123456789abcdef0123456789abcdef/f")
    else:
        for database, body in enumerate(serve_bodies[operation]):
            serve.append(bytes([index, database % 3 if operation != "zones/list" else 0x80]) + dumps(body).encode())
write("serve", serve)

xml_record = '''<record recordName="m1" recordType="Message" recordChangeTag="t1" deleted="false">
    <zoneID zoneName="Chats" ownerRecordName="_o"/>
    <created timestamp="1700000000000" date="2023-11-14T22:13:20.000Z" userRecordName="_u"/>
    <fields>
      <string name="text">Hi &lt;you&gt; &amp; "me" &#x1F600;</string>
      <int64 name="count">2</int64>
      <double name="score">0.5</double>
      <timestamp name="sentAt" date="2023-11-14T22:13:20.123Z">1700000000123</timestamp>
      <reference name="chat" recordName="c1" action="DELETE_SELF"/>
      <list name="tags" type="STRING_LIST"><string>a</string><string>b</string></list>
      <json type="FUTURE">{"a":[1,2]}</json>
    </fields>
    <unknown key="extra">{"k":true}</unknown>
  </record>'''
head = '<?xml version="1.0" encoding="UTF-8"?>\n<records xmlns="https://ferry.dev/ns/records/1" version="1">\n  '
write("xml", [head + xml_record + "\n</records>\n",
              head + '<record recordName="a"/>\n  <record recordName="b" deleted="true"/>\n</records>',
              '<records xmlns="https://ferry.dev/ns/records/1" version="1"><!-- c --><?pi x?></records>',
              '\ufeff' + head + '<record recordName="x"><fields><bytes name="b">aGk=</bytes>'
              '<location name="l" latitude="1" longitude="2"/><asset name="p" fileChecksum="c" size="1"/>'
              '</fields></record></records>'])

ckdb = [
    'DEFINE SCHEMA RECORD TYPE Message (sentAt TIMESTAMP QUERYABLE SORTABLE, text STRING SEARCHABLE);',
    '''DEFINE SCHEMA
    CREATE ROLE Moderator;
    // Messages users send.
    RECORD TYPE Message (
        "___createTime" TIMESTAMP SORTABLE,
        "___recordID"   REFERENCE QUERYABLE,
        text            STRING QUERYABLE SEARCHABLE,
        count           INT64 QUERYABLE SORTABLE,
        score           NUMBER PREFERRED AS DOUBLE QUERYABLE,
        tags            LIST<STRING> QUERYABLE,
        location        LOCATION QUERYABLE,
        photo           ASSET,
        secret          ENCRYPTED BYTES,
        GRANT WRITE TO "_creator",
        GRANT READ, CREATE TO "_world"
    );
    /* users */
    RECORD TYPE Users ("___recordID" REFERENCE QUERYABLE, roles LIST<INT64>, -- the roles
        GRANT READ TO "_world");
''',
    'DEFINE SCHEMA RECORD TYPE A ( x STRING );',
]
write("schema", ckdb)

payloads = [b"".join(line + b"\n" for line in sample_lines("chat.ndjson", 4)), b"", b"hello hello hello hello\n" * 20]
gz = [gzip.compress(p, mtime=0) for p in payloads]
gz.append(gz[0] + gz[1])                                            # two members
gz.append(gz[0][:len(gz[0]) // 2])                                  # truncated
write("gzip", gz)


def tar(members, compress=False):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT if any(len(n) > 90 for n, _ in members)
                      else tarfile.USTAR_FORMAT) as archive:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 0
            info.mode = 0o644
            archive.addfile(info, io.BytesIO(data))
    data = buffer.getvalue().rstrip(b"\0")
    data += b"\0" * ((-len(data)) % 512) + b"\0" * 1024
    return gzip.compress(data, mtime=0) if compress else data


def pax_overflow():
    """A pax header whose second record declares a length near 2^63 (a trap, found by review)."""
    def header(name, size, kind):
        block = bytearray(512)
        block[0:len(name)] = name
        block[100:108] = b"0000644\0"
        block[124:136] = b"%011o\0" % size
        block[136:148] = b"00000000000\0"
        block[156:157] = kind
        block[257:265] = b"ustar\x0000"
        block[148:156] = b" " * 8
        block[148:156] = b"%06o\0 " % sum(block)
        return bytes(block)
    records = b"9 path=a\n9223372036854775807 path=b\n"
    data = header(b"pax", len(records), b"x") + records + b"\0" * ((-len(records)) % 512)
    data += header(b"a", 2, b"0") + b"a\n" + b"\0" * 510 + b"\0" * 1024
    return data


lines = b"".join(line + b"\n" for line in sample_lines("shopping.ndjson", 2))
write("archive", [
    tar([("records/private/_defaultZone.ndjson", lines)]),
    tar([("records/private/Chats@_o.ndjson", dumps(RECORD).encode() + b"\n"), ("assets/abc", b"abc"),
         ("changes/history.ndjson", history[0] + b"\n")]),
    tar([("exports/query.json", sample("lookup-response-with-error.json"))]),
    tar([("records/shared/Z.ndjson", dumps(TINY).encode() + b"\n")], compress=True),
    b"\0" * 1024,
    pax_overflow(),
])

# Dictionaries: the words each format is made of.
DICTIONARIES = {
    "record-line": ['"recordName"', '"recordType"', '"fields"', '"value"', '"type"', '"zoneID"', '"zoneName"',
                    '"ownerRecordName"', '"created"', '"modified"', '"timestamp"', '"userRecordName"', '"deleted"',
                    '"recordChangeTag"', '"parent"', '"share"', '"action"', '"STRING"', '"INT64"', '"DOUBLE"',
                    '"TIMESTAMP"', '"BYTES"', '"REFERENCE"', '"LOCATION"', '"ASSETID"', '"STRING_LIST"',
                    '"INT64_LIST"', '"DOUBLE_LIST"', '"REFERENCE_LIST"', '"latitude"', '"longitude"', '"fileChecksum"',
                    '"downloadURL"', '"size"', '"serverErrorCode"', '"reason"', '"DELETE_SELF"', '"NONE"', 'true',
                    'false', 'null', '\\u00e9', '\\ud83d\\ude00', '1e308', '-0.0', '9007199254740993'],
    "predicate": ['==', '!=', '<=', '>=', 'AND', 'OR', 'NOT', 'BETWEEN', 'IN', 'CONTAINS', 'BEGINSWITH', 'ENDSWITH',
                  'LIKE', 'MATCHES', 'ANY', 'ALL', 'NONE', 'SOME', '[c]', '[cd]', '[n]', 'TRUEPREDICATE',
                  'FALSEPREDICATE', 'nil', 'SUBQUERY(', '@count', '@sum', '@avg', '[FIRST]', '[LAST]', '[SIZE]',
                  'CAST(', '"NSDate"', 'FUNCTION(', 'distanceToLocation:fromLocation:(', '$x', '%@', '%K', 'self',
                  'creationDate', 'recordName', 'zoneName', '{1, 2}', '9007199254740993'],
    "xml": ['<record ', '</record>', '<fields>', '</fields>', '<records xmlns="https://ferry.dev/ns/records/1" version="1">',
            'recordName=', 'recordType=', '<string name=', '</string>', '<int64 name=', '<double name=',
            '<timestamp name=', '<reference name=', '<list name=', 'type="STRING_LIST"', '<unknown key=', '<json type=',
            '<zoneID ', '<created ', '<bytes name=', '<location ', '<asset ', '&amp;', '&#x1F600;', '<![CDATA[', ']]>',
            '<!--', '-->', '<!DOCTYPE', '<?xml version="1.0"?>', 'deleted="true"'],
    "schema": ['DEFINE SCHEMA', 'RECORD TYPE', 'CREATE ROLE', 'GRANT', 'READ', 'WRITE', 'CREATE', 'TO', '"_world"',
               '"_creator"', 'QUERYABLE', 'SORTABLE', 'SEARCHABLE', 'STRING', 'INT64', 'DOUBLE', 'NUMBER',
               'PREFERRED AS', 'TIMESTAMP', 'REFERENCE', 'ASSET', 'LOCATION', 'BYTES', 'ENCRYPTED', 'LIST<', '>',
               '"___recordID"', '//', '/*', '*/', '--'],
    "changelog": ['"event"', '"zoneSaved"', '"zoneDeleted"', '"zonePurged"', '"recordSaved"', '"recordDeleted"',
                  '"checkpoint"', '"record"', '"syncToken"', '"moreComing"', '"records"', '"zones"', '"zoneID"',
                  '"zoneName"', '"recordName"', '"deleted"', '"purged"', '"serverErrorCode"', '"fields"'],
}
DICTIONARIES["responses"] = DICTIONARIES["record-line"] + DICTIONARIES["changelog"] + ['"continuationMarker"']
DICTIONARIES["serve"] = DICTIONARIES["changelog"] + ['"operations"', '"operationType"', '"create"', '"update"',
    '"forceUpdate"', '"replace"', '"forceReplace"', '"delete"', '"forceDelete"', '"atomic"', '"query"', '"recordType"',
    '"filterBy"', '"sortBy"', '"comparator"', '"fieldName"', '"fieldValue"', '"resultsLimit"', '"desiredKeys"',
    '"numbersAsStrings"', '"continuationMarker"', '"recordChangeTag"', '"tokens"', '"metaSyncToken"', '"zone"',
    '"desiredRecordTypes"', '"receipt"', '"ASSETID"', '"INT64"', '"STRING_LIST"', '"LIST_CONTAINS"', '"GREATER_THAN"']
DICTIONARIES["store-sql"] = DICTIONARIES["predicate"] + ['f0', 'f1', 'f2', 'f3', 'f4', 'f5', '"Kelvin"', '"\u212aelvin"']
for name, words in DICTIONARIES.items():
    with open(os.path.join(CORPUS, name + ".dict"), "w", encoding="utf-8") as f:
        for word in words:
            escaped = "".join(chr(b) if 0x20 <= b < 0x7f and b not in b'"\\' else "\\x%02X" % b for b in word.encode())
            f.write('"' + escaped + '"\n')
