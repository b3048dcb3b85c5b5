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
        var cutter = ResponseCutter(text: text, runBytes: runBytes, validatingDepth: validatingDepth)
        do throws(RecordFormatError) {
            try s.beginObject()
            var first = true
            guard try ResponseWalker.walkMembers(&s, first: &first, &cutter), cutter.sawRecords else { return nil }
            return cutter.runs
        } catch {
            return nil
        }
    }
}

/// The visitor of a response being cut (``ResponseWalker``): its `records`, or the records of
/// each of its `zones` entries, collected in runs; the rest checked in full (it is decoded
/// nowhere else). It stops the walk at anything not to cut: a record member (the object is a
/// record with a member named `records`), both `records` and `zones` (the decoder reads such a
/// document as its `records`), a zone entry with an error or without a zone or records.
private struct ResponseCutter: ResponseVisitor, ZoneEntryVisitor {
    let text: UnsafeRawBufferPointer
    let runBytes: Int
    let validatingDepth: Int?
    /// The runs cut so far, in order.
    var runs: [DocumentSplitter.Run] = []
    var sawRecords = false
    private var sawZones = false
    /// The keys of the open objects (the response's, a zone entry's), for duplicate checks.
    private var scratch = JSONKeyScratch()
    /// Where the keys of the object being read start in ``scratch``; the response's.
    private var mark = 0
    private var responseMark = 0
    /// The zone entry being read: its zone, and its `records` array (read once the entry ends).
    private var zone: ZoneID?
    private var records: JSONScanner?

    init(text: UnsafeRawBufferPointer, runBytes: Int, validatingDepth: Int?) {
        self.text = text
        self.runBytes = runBytes
        self.validatingDepth = validatingDepth
        responseMark = scratch.mark
        mark = responseMark
    }

    mutating func readKey(_ s: inout JSONScanner) throws(RecordFormatError) -> JSONStringToken {
        try s.readKey(recordingIn: &scratch, from: mark)
    }

    mutating func visitMember(_ member: CloudKitKey?, key: JSONStringToken, _ s: inout JSONScanner) throws(RecordFormatError) -> Bool {
        switch member {
        case .records? where s.current == UInt8(ascii: "["):
            guard !sawZones else { return false }
            try collect(&s, zone: nil)
            sawRecords = true
        case .zones? where s.current == UInt8(ascii: "["):
            guard !sawRecords else { return false }
            guard try ResponseWalker.walkZoneEntries(&s, &self) else { return false }
            sawRecords = true
            sawZones = true
        case let member? where member.isRecordMember:
            return false // a record with a member named `records`: read whole
        default:
            try s.skipValue(scratch: &scratch)
        }
        return true
    }

    mutating func beginZoneEntry(at start: Int) {
        mark = scratch.mark
        zone = nil
        records = nil
    }

    mutating func visitZoneEntryMember(_ member: CloudKitKey?, key: JSONStringToken, _ s: inout JSONScanner) throws(RecordFormatError) -> Bool {
        switch member {
        case .zoneID? where s.current == UInt8(ascii: "{"):
            zone = try s.decodeZoneID()
        case .records? where s.current == UInt8(ascii: "["):
            records = s
            try s.skipValueStructure()
        case .serverErrorCode?:
            return false
        default:
            try s.skipValue(scratch: &scratch)
        }
        return true
    }

    mutating func endZoneEntry(_ range: Range<Int>, _ s: inout JSONScanner) throws(RecordFormatError) -> Bool {
        scratch.forget(from: mark)
        mark = responseMark
        guard var records, let zone else { return false }
        try collect(&records, zone: zone)
        return true
    }

    /// The records array at the scanner, in runs of about ``runBytes``.
    private mutating func collect(_ s: inout JSONScanner, zone: ZoneID?) throws(RecordFormatError) {
        var collector = RunCollector(text: text, zone: zone, runBytes: runBytes, validatingDepth: validatingDepth)
        swap(&collector.runs, &runs)
        defer { swap(&collector.runs, &runs) }
        _ = try ResponseWalker.walkRecordEntries(&s, &collector)
        collector.finish()
    }
}

/// Collects the entries of one `records` array into runs of about `runBytes`, each entry
/// skipped structurally or, with a `validatingDepth`, checked in full (``JSONValidator``).
private struct RunCollector: RecordEntryVisitor {
    let text: UnsafeRawBufferPointer
    let zone: ZoneID?
    let runBytes: Int
    let validatingDepth: Int?
    /// The runs cut so far (the caller's, moved in).
    var runs: [DocumentSplitter.Run] = []
    private var run: DocumentSplitter.Run
    private var runStart = -1

    init(text: UnsafeRawBufferPointer, zone: ZoneID?, runBytes: Int, validatingDepth: Int?) {
        self.text = text
        self.zone = zone
        self.runBytes = runBytes
        self.validatingDepth = validatingDepth
        run = DocumentSplitter.Run(elements: [], zone: zone)
    }

    mutating func visitRecordEntry(_ s: inout JSONScanner) throws(RecordFormatError) -> Bool {
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
            runs.append(run)
            run = DocumentSplitter.Run(elements: [], zone: zone)
            runStart = -1
        }
        return true
    }

    /// Adds the last run, if it holds anything.
    mutating func finish() {
        if !run.elements.isEmpty { runs.append(run) }
    }
}
