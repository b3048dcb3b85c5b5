import FerryRecords

/// Cuts a large response document into runs of its records, so that they are decoded on every
/// core, not by one thread: the `records` of `records/query`, `records/lookup`,
/// `records/modify` and `records/changes` responses, and the `records` of each zone of a
/// `changes/zone` response.
///
/// A structural pass finds where each record lies (strings, brackets and literals are checked,
/// not decoded); everything around the records — the response's other members, the zones'
/// IDs and tokens — is checked in full here, since it is not decoded elsewhere. Only a document
/// of a shape it knows is cut: anything else (a record, a zone listing, a zone error entry, an
/// array, a document that is not valid) is left whole, and its decoder reads it and words its
/// errors.
enum DocumentSplitter {
    /// A run of records of one document: their byte ranges in the text and, for records that
    /// came in a zone of a `changes/zone` response, that zone.
    struct Run {
        var elements: [Range<Int>]
        var zone: ZoneID?
        /// When cut with a `validatingDepth`, each element's ``JSONValidator`` outcome (one that is not
        /// well-formed was only skipped structurally: its decoder finds what is wrong).
        var checks: [JSONValidator.Result] = []
    }

    /// What a text of documents is cut into, in order.
    enum Piece {
        /// Bytes decoded as whole documents.
        case documents(Range<Int>)
        /// Records, each decoded on its own.
        case records(Run)
    }

    /// The pieces of `text` (whitespace-separated documents), each run of records about
    /// `runBytes` long; `nil` when nothing in it is worth cutting. With `validatingDepth`, each
    /// record is checked in full as it is found (``Run/checks``), for callers that would check it
    /// next, as they would: nesting at most `validatingDepth` levels (and no deeper than
    /// `maximumDepth` allows where it lies in the document).
    static func pieces(of text: UnsafeRawBufferPointer, runBytes: Int, maximumDepth: Int, validatingDepth: Int? = nil) -> [Piece]? {
        var pieces: [Piece] = []
        var cutAny = false
        var scanner = JSONScanner(text, maximumDepth: maximumDepth)
        while true {
            scanner.skipWhitespace()
            if scanner.isAtEnd { break }
            let start = scanner.position
            if let runs = runs(of: &scanner, in: text, runBytes: runBytes, validatingDepth: validatingDepth) {
                pieces.append(contentsOf: runs.map(Piece.records))
                cutAny = true
                continue
            }
            // Not a shape to cut: the rest is read whole (its end is found by its decoder).
            pieces.append(.documents(start..<text.count))
            break
        }
        return cutAny ? pieces : nil
    }

    /// The runs of records of the document at the scanner, which is left after it; `nil`, with
    /// the scanner anywhere, when the document is not one to cut.
    private static func runs(of s: inout JSONScanner, in text: UnsafeRawBufferPointer, runBytes: Int, validatingDepth: Int?) -> [Run]? {
        var result: [Run] = []
        var scratch = JSONKeyScratch()
        do throws(RecordFormatError) {
            try s.beginObject()
            let mark = scratch.mark
            var sawRecords = false, sawZones = false
            var first = true
            while try s.nextMember(&first) {
                let key = try s.readKey(recordingIn: &scratch, from: mark)
                s.skipWhitespace()
                if s.equals(key, "records") && s.current == UInt8(ascii: "[") {
                    // A document with `records` and `zones` is read as its decoder reads it:
                    // its `records` only.
                    guard !sawZones else { return nil }
                    try collect(&s, in: text, zone: nil, runBytes: runBytes, validatingDepth: validatingDepth, into: &result)
                    sawRecords = true
                } else if s.equals(key, "zones") && s.current == UInt8(ascii: "[") {
                    guard !sawRecords else { return nil }
                    guard try zoneRuns(&s, in: text, scratch: &scratch, runBytes: runBytes, validatingDepth: validatingDepth,
                                       into: &result) else { return nil }
                    sawRecords = true
                    sawZones = true
                } else if isRecordKey(key, s) {
                    return nil // a record with a member named `records`: read whole
                } else {
                    try s.skipValue(scratch: &scratch)
                }
            }
            return sawRecords ? result : nil
        } catch {
            return nil
        }
    }

    /// The entries of a `zones` array: `false` unless every entry has records and no error.
    private static func zoneRuns(_ s: inout JSONScanner, in text: UnsafeRawBufferPointer, scratch: inout JSONKeyScratch,
                                 runBytes: Int, validatingDepth: Int?, into result: inout [Run]) throws(RecordFormatError) -> Bool {
        try s.beginArray()
        var first = true
        while try s.nextElement(&first) {
            try s.beginObject()
            let mark = scratch.mark
            defer { scratch.forget(from: mark) }
            var zone: ZoneID?
            var records: JSONScanner?
            var firstMember = true
            while try s.nextMember(&firstMember) {
                let key = try s.readKey(recordingIn: &scratch, from: mark)
                s.skipWhitespace()
                if s.equals(key, "zoneID") && s.current == UInt8(ascii: "{") {
                    zone = try s.decodeZoneID()
                } else if s.equals(key, "records") && s.current == UInt8(ascii: "[") {
                    records = s
                    try s.skipValueStructure()
                } else if s.equals(key, "serverErrorCode") {
                    return false
                } else {
                    try s.skipValue(scratch: &scratch)
                }
            }
            guard var records, let zone else { return false }
            try collect(&records, in: text, zone: zone, runBytes: runBytes, validatingDepth: validatingDepth, into: &result)
        }
        return true
    }

    /// The elements of the array at the scanner, in runs of about `runBytes`.
    private static func collect(_ s: inout JSONScanner, in text: UnsafeRawBufferPointer, zone: ZoneID?, runBytes: Int, validatingDepth: Int?,
                                into result: inout [Run]) throws(RecordFormatError) {
        try s.beginArray()
        var run = Run(elements: [], zone: zone)
        var runStart = -1
        var first = true
        while try s.nextElement(&first) {
            s.skipWhitespace()
            let start = s.position
            if let validatingDepth {
                // The depth the caller's check allows, and what is left of the document's.
                let depth = min(validatingDepth, s.maximumDepth - s.nestingDepth)
                let (check, end) = JSONValidator.checkValue(in: text, from: start, maximumDepth: depth)
                if check.isWellFormed {
                    s.position = end
                } else {
                    try s.skipValueStructure()
                }
                run.checks.append(check)
            } else {
                try s.skipValueStructure()
            }
            if runStart < 0 { runStart = start }
            run.elements.append(start..<s.position)
            if s.position - runStart >= runBytes {
                result.append(run)
                run = Run(elements: [], zone: zone)
                runStart = -1
            }
        }
        if !run.elements.isEmpty { result.append(run) }
    }

    /// Whether `key` names a member of a record dictionary (so the object is a record).
    private static func isRecordKey(_ key: JSONStringToken, _ s: JSONScanner) -> Bool {
        for name: StaticString in ["recordName", "recordType", "fields", "recordChangeTag", "created", "modified", "zoneID",
                                   "parent", "share", "deleted", "shortGUID", "pluginFields"] where s.equals(key, name) {
            return true
        }
        return false
    }
}
