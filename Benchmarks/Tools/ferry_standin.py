#!/usr/bin/env python3
"""A stand-in for `ferry` that tests the `serve` benchmark's plumbing before `ferry serve` exists.

NOT a CloudKit server and not a peer: it answers CKWS-shaped JSON so that `ferry-load` and the
`serve` task of `ferry-bench` can be run end to end. Never use its figures.

  ferry_standin.py convert RECORDS.ndjson STORE.sqlite [--quiet]
      a SQLite file with a subset of the store's tables (zones, records, journal; same columns
      for what the serve task reads)
  ferry_standin.py index STORE ...            does nothing
  ferry_standin.py verify STORE [--quiet]     one of ferry verify's invariants: every record's seq
      names a journal entry of that record (exit 1 otherwise)
  ferry_standin.py serve STORE [--host 127.0.0.1] [--port N] [--container ID]
      [--environment ENV] [--quiet] [--fail-rate F] [--chunked] [--close-every N]
      HTTP/1.1 keep-alive (Python's ThreadingHTTPServer) on loopback: records/lookup (the
      store's records, NOT_FOUND per record otherwise), records/query (the first records of the
      type, filters ignored), records/modify (create only: EXISTS when the name is taken; the
      record and a `created` journal entry written in one transaction). --fail-rate answers that
      fraction with 503 TRY_AGAIN_LATER, --chunked sends chunked bodies, --close-every closes the
      connection after every Nth answer. To check the serve task's journal check, --lose-every N
      acknowledges every Nth create without writing it, --phantom-every N also writes a record
      nobody sent with it. Exits 0 on SIGTERM or SIGINT.

  FERRY=Benchmarks/Tools/ferry_standin.py ferry-bench serve     # the task against the stand-in
"""
import json
import random
import re
import signal
import sqlite3
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCHEMA = """
CREATE TABLE zones (id INTEGER PRIMARY KEY, database_id INTEGER NOT NULL, zone_name TEXT NOT NULL,
    owner_record_name TEXT NOT NULL, UNIQUE (database_id, zone_name, owner_record_name));
CREATE TABLE records (id INTEGER PRIMARY KEY, zone_id INTEGER NOT NULL, record_name TEXT NOT NULL,
    record_type TEXT, seq INTEGER NOT NULL, body TEXT NOT NULL);
CREATE UNIQUE INDEX records_by_name ON records (zone_id, record_name);
CREATE INDEX records_by_type ON records (record_type, zone_id);
CREATE TABLE journal (seq INTEGER PRIMARY KEY, zone_id INTEGER NOT NULL, kind TEXT NOT NULL,
    record_name TEXT, record_type TEXT, change_tag TEXT);
"""


def convert(source, store):
    db = sqlite3.connect(store)
    db.executescript(SCHEMA)
    zones = {}
    with open(source, "rb") as f:
        for line in f:
            record = json.loads(line)
            zone = record.get("zoneID", {})
            key = (zone.get("zoneName", "_defaultZone"), zone.get("ownerRecordName", ""))
            if key not in zones:
                zones[key] = db.execute("INSERT INTO zones (database_id, zone_name, owner_record_name) VALUES (2, ?, ?)", key).lastrowid
            cur = db.execute("INSERT INTO journal (zone_id, kind, record_name, record_type) VALUES (?, 'created', ?, ?)",
                             (zones[key], record["recordName"], record.get("recordType")))
            db.execute("INSERT INTO records (zone_id, record_name, record_type, seq, body) VALUES (?, ?, ?, ?, ?)",
                       (zones[key], record["recordName"], record.get("recordType"), cur.lastrowid,
                        json.dumps(record, separators=(",", ":"), ensure_ascii=False)))
    db.commit()
    db.close()


def error(name, code, reason):
    entry = {"recordName": name, "serverErrorCode": code, "reason": reason} if name else {"serverErrorCode": code, "reason": reason}
    return entry


class Service:
    def __init__(self, store, options):
        self.db = sqlite3.connect(store, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode = wal")
        self.lock = threading.Lock()
        self.options = options
        self.count = 0

    def zone_id(self, body):
        zone = body.get("zoneID") or {}
        name = zone.get("zoneName", "_defaultZone")
        owner = zone.get("ownerRecordName")
        if owner is None:
            row = self.db.execute("SELECT id FROM zones WHERE zone_name = ?", (name,)).fetchone()
        else:
            row = self.db.execute("SELECT id FROM zones WHERE zone_name = ? AND owner_record_name = ?", (name, owner)).fetchone()
        if row is None:
            row = (self.db.execute("INSERT INTO zones (database_id, zone_name, owner_record_name) VALUES (2, ?, ?)",
                                   (name, owner or "")).lastrowid,)
        return row[0]

    def lookup(self, body):
        zone = self.zone_id(body)
        out = []
        for item in body.get("records", []):
            row = self.db.execute("SELECT body FROM records WHERE zone_id = ? AND record_name = ?", (zone, item["recordName"])).fetchone()
            out.append(json.loads(row[0]) if row else error(item["recordName"], "NOT_FOUND", "Record not found"))
        return 200, {"records": out}

    def query(self, body):
        zone = self.zone_id(body)
        limit = int(body.get("resultsLimit", 100))
        rows = self.db.execute("SELECT body FROM records WHERE record_type = ? AND zone_id = ? LIMIT ?",
                               (body["query"]["recordType"], zone, limit)).fetchall()
        return 200, {"records": [json.loads(r[0]) for r in rows]}

    def modify(self, body):
        zone = self.zone_id(body)
        out = []
        for op in body.get("operations", []):
            record = op["record"]
            name = record["recordName"]
            if op.get("operationType") != "create":
                out.append(error(name, "BAD_REQUEST", "the stand-in creates only"))
                continue
            if self.db.execute("SELECT 1 FROM records WHERE zone_id = ? AND record_name = ?", (zone, name)).fetchone():
                out.append(error(name, "EXISTS", "record to insert already exists"))
                continue
            self.count += 1
            if self.options["lose_every"] and self.count % self.options["lose_every"] == 0:
                out.append(dict(record, recordChangeTag="lost", deleted=False))
                continue
            if self.options["phantom_every"] and self.count % self.options["phantom_every"] == 0:
                with self.db:
                    seq = self.db.execute("INSERT INTO journal (zone_id, kind, record_name) VALUES (?, 'created', ?)",
                                          (zone, "load-phantom-%d" % self.count)).lastrowid
                    self.db.execute("INSERT INTO records (zone_id, record_name, seq, body) VALUES (?, ?, ?, '{}')",
                                    (zone, "load-phantom-%d" % self.count, seq))
            with self.db:
                seq = self.db.execute("INSERT INTO journal (zone_id, kind, record_name, record_type, change_tag) VALUES (?, 'created', ?, ?, ?)",
                                      (zone, name, record.get("recordType"), "t1")).lastrowid
                saved = dict(record, recordChangeTag="s%x" % seq, deleted=False)
                self.db.execute("INSERT INTO records (zone_id, record_name, record_type, seq, body) VALUES (?, ?, ?, ?, ?)",
                                (zone, name, record.get("recordType"), seq, json.dumps(saved, separators=(",", ":"))))
            out.append(saved)
        return 200, {"records": out}

    def answer(self, path, raw):
        match = re.fullmatch(r"/database/1/[^/]+/(development|production)/(public|private|shared)/records/(lookup|query|modify)", path)
        if not match:
            return 404, error(None, "NOT_FOUND", "unknown path " + path)
        if random.random() < self.options["fail_rate"]:
            return 503, dict(error(None, "TRY_AGAIN_LATER", "injected by the stand-in"), retryAfter=1)
        try:
            body = json.loads(raw)
        except ValueError:
            return 400, error(None, "BAD_REQUEST", "malformed JSON")
        with self.lock:
            return getattr(self, match.group(3))(body)


def serve(store, options):
    service = Service(store, options)
    counter = {"n": 0}
    counter_lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def do_POST(self):
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            status, body = service.answer(self.path.split("?")[0], raw)
            data = json.dumps(body, indent=2, separators=(",", " : ")).encode()
            with counter_lock:
                counter["n"] += 1
                closing = options["close_every"] and counter["n"] % options["close_every"] == 0
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=UTF-8")
            if closing:
                self.send_header("Connection", "close")
                self.close_connection = True
            if options["chunked"]:
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for i in range(0, len(data), 1000):
                    part = data[i:i + 1000]
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                self.wfile.write(b"0\r\n\r\n")
            else:
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        def log_message(self, fmt, *args):
            if not options["quiet"]:
                sys.stderr.write("%s %s\n" % (self.command, fmt % args))

    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer.request_queue_size = 1024  # 64 clients connect at once: a backlog of 5 drops some
    server = ThreadingHTTPServer((options["host"], options["port"]), Handler)

    def stop(signum, frame):
        threading.Thread(target=server.shutdown).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if not options["quiet"]:
        sys.stderr.write("stand-in serving %s on http://%s:%d\n" % (store, options["host"], options["port"]))
    server.serve_forever()
    with service.lock:
        service.db.close()


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    command, args = argv[1], argv[2:]
    if command in ("--version", "version"):
        print("ferry_standin (not ferry)")
    elif command == "convert":
        paths = [a for a in args if not a.startswith("--")]
        convert(paths[0], paths[1])
    elif command == "index":
        pass
    elif command == "verify":
        db = sqlite3.connect("file:%s?mode=ro" % args[0], uri=True)
        bad = db.execute("SELECT count(*) FROM records r LEFT JOIN journal j ON j.seq = r.seq AND j.zone_id = r.zone_id "
                         "AND j.record_name = r.record_name WHERE j.seq IS NULL").fetchone()[0]
        if bad:
            sys.exit("%d records without their journal entry" % bad)
    elif command == "serve":
        options = {"host": "127.0.0.1", "port": 8080, "quiet": False, "fail_rate": 0.0, "chunked": False, "close_every": 0,
                   "lose_every": 0, "phantom_every": 0}
        store, i = None, 0
        while i < len(args):
            a = args[i]
            if a == "--quiet": options["quiet"] = True
            elif a == "--chunked": options["chunked"] = True
            elif a in ("--host", "--port", "--container", "--environment", "--fail-rate", "--close-every",
                       "--lose-every", "--phantom-every"):
                i += 1
                key = a[2:].replace("-", "_")
                options[key] = {"port": int, "fail_rate": float, "close_every": int, "lose_every": int, "phantom_every": int}.get(key, str)(args[i])
            elif store is None: store = a
            else: sys.exit("unexpected argument " + a)
            i += 1
        if options["host"] != "127.0.0.1":
            sys.exit("the stand-in serves loopback only")
        serve(store, options)
    else:
        sys.exit("the stand-in knows convert, index and serve, not " + command)


if __name__ == "__main__":
    main(sys.argv)
