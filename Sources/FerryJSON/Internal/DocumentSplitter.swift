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
            return try cutter.cut(&s) ? cutter.runs : nil
        } catch {
            return nil
        }
    }
}

/// Cuts one response, walked with ``ResponseWalker``: its `records`, or the records of each of
/// its `zones` entries, collected in runs; the rest checked in full (it is decoded nowhere else).
private struct ResponseCutter {
    let text: UnsafeRawBufferPointer
    let runBytes: Int
    let validatingDepth: Int?
    /// The runs cut so far, in order.
    var runs: [DocumentSplitter.Run] = []
    /// The keys of the open objects (the response's, a zone entry's), for duplicate checks.
    private var scratch = JSONKeyScratch()

    init(text: UnsafeRawBufferPointer, runBytes: Int, validatingDepth: Int?) {
        self.text = text
        self.runBytes = runBytes
        self.validatingDepth = validatingDepth
    }

    /// Cuts the response whose `{` the scanner consumed; `false` when it is not one to cut: a
    /// record (with a member named `records`), both `records` and `zones` (the decoder reads such
    /// a document as its `records`), a zone entry with an error or without a zone or records, or
    /// neither array.
    mutating func cut(_ s: inout JSONScanner) throws(RecordFormatError) -> Bool {
        let mark = scratch.mark
        var sawRecords = false, sawZones = false
        var members = ResponseWalker.Members()
        while let (member, _) = try members.next(&s, recordingIn: &scratch, from: mark) {
            switch member {
            case .records? where s.current == UInt8(ascii: "["):
                guard !sawZones else { return false }
                try collect(&s, zone: nil)
                sawRecords = true
            case .zones? where s.current == UInt8(ascii: "["):
                guard !sawRecords, try cutZones(&s) else { return false }
                sawRecords = true
                sawZones = true
            case let member? where member.isRecordMember:
                return false // a record with a member named `records`: read whole
            default:
                try s.skipValue(scratch: &scratch)
            }
        }
        return sawRecords
    }

    /// The entries of a `zones` array: `false` unless every entry has a zone and records, and no
    /// error.
    private mutating func cutZones(_ s: inout JSONScanner) throws(RecordFormatError) -> Bool {
        var entries = try ResponseWalker.ZoneEntries(&s)
        while try entries.next(&s) != nil {
            let mark = scratch.mark
            defer { scratch.forget(from: mark) }
            var zone: ZoneID?
            var records: JSONScanner?
            var members = ResponseWalker.Members()
            while let (member, _) = try members.next(&s, recordingIn: &scratch, from: mark) {
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
            }
            guard var records, let zone else { return false }
            try collect(&records, zone: zone)
        }
        return true
    }

    /// The entries of the `records` array at the scanner, in runs of about ``runBytes``, each
    /// skipped structurally or, with a ``validatingDepth``, checked in full (``JSONValidator``).
    private mutating func collect(_ s: inout JSONScanner, zone: ZoneID?) throws(RecordFormatError) {
        var run = DocumentSplitter.Run(elements: [], zone: zone)
        var runStart = -1
        var entries = try ResponseWalker.RecordEntries(&s)
        while try entries.next(&s) {
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
        }
        if !run.elements.isEmpty { runs.append(run) }
    }
}
