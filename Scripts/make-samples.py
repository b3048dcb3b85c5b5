#!/usr/bin/env python3
"""Writes Ferry's Samples/ (deterministic; standard library only).

Every CloudKit field type appears at least once across the samples, plus every system field,
unknown keys, unicode, emoji, Int64 extremes, assets and locations.
Run from the repository root: python3 Scripts/make-samples.py
"""
import json, os

OWNER = "_9f4c2a7e1b3d5f60"
ALICE = "_a11ce0000000000000000000000000a1"
BOB = "_b0b0000000000000000000000000b0b0"
DEV = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"


def zone(name, ztype="REGULAR_CUSTOM_ZONE", owner=OWNER):
    z = {"zoneName": name, "ownerRecordName": owner}
    if ztype:
        z["zoneType"] = ztype
    return z


def stamp(ts, user, device=DEV):
    s = {"timestamp": ts, "userRecordName": user}
    if device:
        s["deviceID"] = device
    return s


def rec(name, rtype, z, fields, ts, user=ALICE, tag=None, **extra):
    r = {"recordName": name, "recordType": rtype, "zoneID": z, "fields": fields,
         "pluginFields": {}, "recordChangeTag": tag or ("t" + name[-6:].lower()),
         "created": stamp(ts, user), "modified": stamp(ts + 1500, user, "2"), "deleted": False}
    r.update(extra)
    return r


def write_ndjson(path, records):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")


chats = zone("Chats")
chat_id = "C0FFEE00-0000-4000-8000-000000000001"
m1, m2, m3 = ("A1000000-0000-4000-8000-0000000000%02d" % i for i in (1, 2, 3))
chat = [
    rec(chat_id, "Chat", chats, {
        "title": {"value": "Weekend trip 🏔️ — Zürich & São Paulo", "type": "STRING"},
        "members": {"value": [ALICE, BOB], "type": "STRING_LIST"},
        "isGroup": {"value": 0, "type": "INT64"},
        "messageCount": {"value": 3, "type": "INT64"},
        "lastActivity": {"value": 1700000300000, "type": "TIMESTAMP"},
        "avatar": {"value": {"fileChecksum": "AbCdEfGhIjKlMnOpQrStUvWxYz01", "size": 48213,
                              "referenceChecksum": "AQIDBAUGBwgJCgsMDQ4PEBESExQ=",
                              "wrappingKey": "wrap+Key/Base64==", "receipt": "rcpt-7731",
                              "downloadURL": "https://cvws.icloud-content.com/B/AbCd/${f}?o=1"},
                   "type": "ASSETID"},
        "pinnedMessages": {"value": [{"recordName": m1, "zoneID": chats, "action": "NONE"}], "type": "REFERENCE_LIST"},
    }, 1700000000000, share={"recordName": "cloudkit.share-chat-1", "zoneID": chats}),
    rec(m1, "Message", chats, {
        "text": {"value": "Hello! Are we still on for Saturday? 😀👍🏽", "type": "STRING"},
        "chat": {"value": {"recordName": chat_id, "zoneID": chats, "action": "DELETE_SELF"}, "type": "REFERENCE"},
        "count": {"value": 51, "type": "INT64"},
        "score": {"value": 0.1, "type": "DOUBLE"},
        "sentAt": {"value": 1700000100000, "type": "TIMESTAMP"},
        "where": {"value": {"latitude": 47.376887, "longitude": 8.541694, "horizontalAccuracy": 5.0,
                             "verticalAccuracy": 3.5, "altitude": 408.2, "speed": 1.25, "course": 271.5,
                             "timestamp": 1700000099000}, "type": "LOCATION"},
        "tags": {"value": ["travel", "café", "日本"], "type": "STRING_LIST"},
    }, 1700000100000, parent={"recordName": chat_id, "zoneID": chats}),
    rec(m2, "Message", chats, {
        "text": {"value": "Yes — bring the \"good\" map.\nAlso: C:\\Users\\bob\\trip.pdf\t<see> & </record>", "type": "STRING"},
        "chat": {"value": {"recordName": chat_id, "zoneID": chats, "action": "DELETE_SELF"}, "type": "REFERENCE"},
        "count": {"value": 7, "type": "INT64"},
        "sentAt": {"value": 1700000200000, "type": "TIMESTAMP"},
        "relatedRecords": {"value": [{"recordName": m1, "zoneID": chats, "action": "NONE"},
                                      {"recordName": chat_id, "zoneID": chats, "action": "VALIDATE"}],
                           "type": "REFERENCE_LIST"},
        "attachments": {"value": [{"fileChecksum": "Zm9vYmFyYmF6", "size": 1048576,
                                   "downloadURL": "https://cvws.icloud-content.com/B/Zm9v/${f}"},
                                  {"fileChecksum": "cXV1eHF1dXg=", "size": 2048}], "type": "ASSETID_LIST"},
        "thumbnail": {"value": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "type": "BYTES"},
    }, 1700000200000, user=BOB, parent={"recordName": chat_id, "zoneID": chats}),
    rec("R0000000-0000-4000-8000-000000000001", "Reaction", chats, {
        "emoji": {"value": "👨‍👩‍👧", "type": "STRING"},
        "message": {"value": {"recordName": m1, "zoneID": chats, "action": "DELETE_SELF"}, "type": "REFERENCE"},
        "reactedAt": {"value": 1700000150000, "type": "TIMESTAMP"},
        "relatedRecords": {"value": [{"recordName": m1, "zoneID": chats, "action": "NONE"}], "type": "REFERENCE_LIST"},
    }, 1700000150000, user=BOB, parent={"recordName": m1, "zoneID": chats}),
    rec(m3, "Message", chats, {
        "text": {"value": "Route saved 🚀", "type": "STRING"},
        "chat": {"value": {"recordName": chat_id, "zoneID": chats, "action": "DELETE_SELF"}, "type": "REFERENCE"},
        "count": {"value": 0, "type": "INT64"},
        "sentAt": {"value": 1700000300000, "type": "TIMESTAMP"},
        "route": {"value": [{"latitude": 47.3769, "longitude": 8.5417}, {"latitude": 46.948, "longitude": 7.4474, "altitude": 540.0}], "type": "LOCATION_LIST"},
        "waypointTimes": {"value": [1700000300000, 1700003900000], "type": "TIMESTAMP_LIST"},
        "legDistancesKm": {"value": [120.5, 0.25, 3.0e-5], "type": "DOUBLE_LIST"},
        "secretNote": {"value": "c2VjcmV0IG5vdGU=", "type": "ENCRYPTED_BYTES"},
        "keyShards": {"value": ["AAEC", "AwQF"], "type": "ENCRYPTED_BYTES_LIST"},
        "chunks": {"value": ["AAE=", "AgM="], "type": "BYTES_LIST"},
        "pending": {"value": [], "type": "UNKNOWN_LIST"},
    }, 1700000300000, parent={"recordName": chat_id, "zoneID": chats}),
]

shop_zone = zone("ShoppingList", owner=ALICE)
list_id = "L1570000-0000-4000-8000-000000000001"
shopping = [
    {"recordName": "cloudkit.share-list-1", "recordType": "cloudkit.share", "zoneID": shop_zone,
     "fields": {"cloudkit.title": {"value": "Groceries", "type": "STRING"}},
     "pluginFields": {}, "recordChangeTag": "s1", "created": stamp(1699000000000, ALICE),
     "modified": stamp(1699000000500, ALICE), "deleted": False, "shortGUID": "0aBcDeFgHiJkLmNoPqRsTuV",
     "publicPermission": "NONE",
     "participants": [{"participantId": "p1", "userIdentity": {"userRecordName": BOB, "nameComponents": {"givenName": "Bob"}},
                       "type": "USER", "acceptanceStatus": "ACCEPTED", "permission": "READ_WRITE"}],
     "owner": {"participantId": "p0", "userIdentity": {"userRecordName": ALICE}, "type": "OWNER",
               "acceptanceStatus": "ACCEPTED", "permission": "READ_WRITE"},
     "currentUserParticipant": {"participantId": "p0", "type": "OWNER"}},
    rec(list_id, "ShoppingList", shop_zone, {
        "name": {"value": "Groceries — week 47", "type": "STRING"},
        "itemCount": {"value": 3, "type": "INT64"},
        "budgetCents": {"value": 9223372036854775807, "type": "INT64"},
        "balanceCents": {"value": -9223372036854775808, "type": "INT64"},
        "priorities": {"value": [1, -2, 9007199254740993], "type": "INT64_LIST"},
        "store": {"value": {"latitude": -33.8688, "longitude": 151.2093}, "type": "LOCATION"},
    }, 1699000001000, share={"recordName": "cloudkit.share-list-1", "zoneID": shop_zone}),
]
items = [("Milk 🥛", 2, 1.49), ("Jalapeño peppers", 6, 0.3), ("Ærø cheese", 1, 12.95)]
for i, (name, qty, price) in enumerate(items, 1):
    shopping.append(rec("I%07d-0000-4000-8000-000000000001" % i, "Item", shop_zone, {
        "name": {"value": name, "type": "STRING"},
        "quantity": {"value": qty, "type": "INT64"},
        "unitPrice": {"value": price, "type": "DOUBLE"},
        "done": {"value": 1 if i == 1 else 0, "type": "INT64"},
        "list": {"value": {"recordName": list_id, "zoneID": shop_zone, "action": "DELETE_SELF"}, "type": "REFERENCE"},
    }, 1699000002000 + i, user=BOB if i % 2 else ALICE, parent={"recordName": list_id, "zoneID": shop_zone}))
for i, (op, what) in enumerate([("add", "Milk 🥛"), ("check", "Milk 🥛"), ("rename", "Jalapeño peppers")], 1):
    shopping.append(rec("J%07d-0000-4000-8000-000000000001" % i, "JournalEntry", shop_zone, {
        "operation": {"value": op, "type": "STRING"},
        "itemName": {"value": what, "type": "STRING"},
        "at": {"value": 1699000100000 + i * 60000, "type": "TIMESTAMP"},
        "list": {"value": {"recordName": list_id, "zoneID": shop_zone, "action": "NONE"}, "type": "REFERENCE"},
    }, 1699000100000 + i * 60000, parent={"recordName": list_id, "zoneID": shop_zone}))

edge = [
    {"recordName": "edge-numbers", "recordType": "Edge", "zoneID": {"zoneName": "_defaultZone", "ownerRecordName": OWNER, "zoneType": "DEFAULT_ZONE"},
     "fields": {
         "int64Max": {"value": 9223372036854775807, "type": "INT64"},
         "int64Min": {"value": -9223372036854775808, "type": "INT64"},
         "negativeZero": {"value": -0.0, "type": "DOUBLE"},
         "denormalMin": {"value": 5e-324, "type": "DOUBLE"},
         "seventeenDigits": {"value": 0.30000000000000004, "type": "DOUBLE"},
         "large": {"value": 1.7976931348623157e308, "type": "DOUBLE"},
         "pi": {"value": 3.141592653589793, "type": "DOUBLE"},
         "legacyNumber": {"value": 42, "type": "NUMBER_INT64"},
         "beforeEpoch": {"value": -86400000, "type": "TIMESTAMP"},
         "futureType": {"value": {"anything": [1, 2, {"x": None}]}, "type": "HYPOTHETICAL_TYPE"},
     },
     "recordChangeTag": "e1", "created": {"timestamp": 0}, "modified": {"timestamp": 1, "userRecordName": ALICE},
     "serverExtension": {"nested": {"kept": True, "list": [1, "two", None, 3.5]}}},
    {"recordName": "edge-strings ✓", "recordType": "Edge",
     "fields": {
         "escapes": {"value": "quote \" backslash \\ slash / \b\f\n\r\t bell \u0007 nul \u0000 del \u007f", "type": "STRING"},
         "astral": {"value": "𝄞 music, 😀 emoji, 🏳️‍🌈 flag, 🇯🇵", "type": "STRING"},
         "scripts": {"value": "日本語 Привет Ελλάδα שלום مرحبا नमस्ते 안녕하세요", "type": "STRING"},
         "lineSeparators": {"value": "a\u2028b\u2029c", "type": "STRING"},
         "empty": {"value": "", "type": "STRING"},
         "emptyList": {"value": [], "type": "STRING_LIST"},
         "noType": {"value": "requests may omit the type"},
     },
     "deleted": False},
    {"recordName": "edge-tombstone", "zoneID": {"zoneName": "Chats", "ownerRecordName": OWNER}, "deleted": True},
]

# A saved records/query response page, pretty-printed as the API returns it.
query_page = {
    "records": [
        rec("Q0000000-0000-4000-8000-00000000000%d" % i, "Message", chats, {
            "text": {"value": t, "type": "STRING"},
            "count": {"value": c, "type": "INT64"},
            "sentAt": {"value": 1700001000000 + i, "type": "TIMESTAMP"},
        }, 1700001000000 + i)
        for i, (t, c) in enumerate([("hello from the API", 60), ("second page item", 12), ("HELLO again", 99)], 1)
    ],
    "continuationMarker": "AQIDBAUGBwgJ+/base64marker==",
}

# A records/lookup response with a per-record error entry (reported, never silently skipped).
lookup = {
    "records": [
        rec("K0000000-0000-4000-8000-000000000001", "Message", chats, {
            "text": {"value": "found me", "type": "STRING"}}, 1700002000000),
        {"recordName": "K0000000-0000-4000-8000-000000000002", "reason": "Record not found",
         "serverErrorCode": "NOT_FOUND", "uuid": "5B3E8C7A-1F2D-4E6F-9A8B-7C6D5E4F3A2B"},
    ]
}

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Samples")
os.makedirs(here, exist_ok=True)
write_ndjson(os.path.join(here, "chat.ndjson"), chat)
write_ndjson(os.path.join(here, "shopping.ndjson"), shopping)
write_ndjson(os.path.join(here, "edge-cases.ndjson"), edge)
with open(os.path.join(here, "query-response.json"), "w", encoding="utf-8") as f:
    json.dump(query_page, f, ensure_ascii=False, indent=2)
    f.write("\n")
with open(os.path.join(here, "lookup-response-with-error.json"), "w", encoding="utf-8") as f:
    json.dump(lookup, f, ensure_ascii=False, indent=2)
    f.write("\n")
