import FerryIO
import FerryInternals
import FerryPredicate
import FerryRecords

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One item of a decoded document (an NDJSON line, a pretty-printed document, an entry of a
/// response cut into runs), in input order.
package enum RecordDocumentItem {
    /// A record to keep; `matched` when the prefilter found that it matches the predicate.
    case record(Record, matched: Bool)
    /// A record the prefilter refused (counted as read, not decoded in full).
    case dropped
    /// An input that is not a record: the error (byte offset and, when known, column within the
    /// line) and the bytes that go to a rejects file.
    case reject(RecordFormatError, raw: UnsafeRawBufferPointer)
    /// A response that lists zones and holds no records (`zones/list`, `changes/database`, …), and
    /// the byte offset where it starts (as an error's, within the text decoded).
    case zoneListing(ZonesResponse, offset: Int)
}

/// Decodes JSON documents of records into items, in order: an NDJSON line (a record dictionary,
/// a CKWS response, a per-record error entry, or a JSON array of these), whitespace-separated
/// documents (pretty-printed responses), or one entry of a response cut into runs. Shared by
/// ``NDJSONReader`` and ``JSONRecordSource``'s parallel reader, so both read alike.
///
/// A response whose structure holds around a bad entry is cut into its entries
/// (``DocumentSplitter``) and each is read on its own (``decodeElement(_:_:zone:checked:_:)``,
/// which is also how a unit decoder reads a response it cut, large or under a prefilter); any
/// other document is decoded whole, in one pass.
package struct RecordDocumentDecoder: Sendable {
    package let configuration: RecordJSON.Configuration
    package let prefilter: NDJSONPrefilter?

    package init(configuration: RecordJSON.Configuration, prefilter: NDJSONPrefilter? = nil) {
        self.configuration = configuration
        self.prefilter = prefilter
    }

    /// Writes a rejected input to a rejects file, followed by a line break: verbatim, or, when it
    /// spans lines (an entry of a pretty-printed document) and is valid JSON, as one compact line,
    /// so the rejects file stays NDJSON. Text that is not valid JSON is kept exactly, lines and
    /// all: compaction can tell whitespace between tokens from whitespace in a string only in
    /// valid JSON (past a string left open it would strip the spaces of every later string).
    package static func writeReject(_ raw: UnsafeRawBufferPointer, to rejects: ByteSink) throws {
        if raw.contains(0x0A) && (try? RecordJSON.validate(raw)) != nil {
            // Its bytes as they were, only the whitespace between tokens gone.
            try rejects.write(JSONCompaction.compacted(raw))
        } else {
            try rejects.write(raw)
            // The rest of an input rejected whole (a document that does not parse) ends with the
            // input's own line end: its bytes go as they were, no line end added.
            if raw.last == 0x0A { return }
        }
        try rejects.write([0x0A])
    }

    /// The error for a line longer than `limit` bytes (the reader's and the converter's alike).
    package static func oversizedLineError(limit: Int, source: String, line: Int, recordIndex: Int) -> RecordFormatError {
        RecordFormatError(
            .tooLarge, "expected a line of at most \(limit) bytes (CloudKit records are at most 1 MB), found a longer one",
            byteOffset: 0, source: source, line: line, column: 1, recordIndex: recordIndex)
    }

    /// Whether a line holds only spaces, tabs and carriage returns.
    package static func isBlank(_ line: UnsafeRawBufferPointer) -> Bool {
        for b in line where b != 0x20 && b != 0x09 && b != 0x0D { return false }
        return true
    }

    /// What the prefilter makes of an object.
    package enum Screening {
        /// A well-formed record without the predicate's literals, or one the fields it reads rule out.
        case dropped
        /// Not well-formed: the error, with offsets in the object.
        case rejected(RecordFormatError)
        /// A record that matches the predicate on the fields it reads.
        case matched
        /// Anything else: decode it in full and judge it then.
        case undecided
    }

    /// Screens the object `bytes` (a line, or an element of a response's `records`) with the
    /// prefilter: first its literals on the raw bytes, then a decode of only the fields the
    /// predicate reads. `zone` is the zone of an element that names none.
    ///
    /// (The prefilter is reached through optional chaining, not bound: a binding copies it,
    /// retaining what it holds, which every decoding thread shares.)
    package func screen(_ bytes: UnsafeRawBufferPointer, zone: ZoneID? = nil, checked: JSONValidator.Result? = nil) -> Screening {
        if prefilter?.mightMatch?(bytes) == false, !ByteSearch.contains(bytes, #"\u"#), let outcome = drop(bytes, checked: checked) {
            return outcome
        }
        guard prefilter?.decide != nil, var partial = prefilter?.selection.flatMap({ selection in
            try? RecordJSON.decodeRecord(bytes, selecting: selection, configuration: configuration)
        }) else { return .undecided }
        if let zone { partial.placeInZone(zone) }
        switch prefilter?.decide?(partial) {
        case .drop: return drop(bytes, checked: checked) ?? .undecided
        case .matched: return .matched
        case .keep, nil: return .undecided
        }
    }

    /// A record the prefilter rules out is dropped once it is found well-formed (the partial
    /// decode skips what it does not read unchecked). `nil` for a well-formed object that may be
    /// something other than a record (a response, a zone listing or an error entry, which are
    /// decoded and reported).
    /// `checked`: the ``JSONValidator`` outcome for `bytes` when the caller has it already (one
    /// that is not well-formed is checked again).
    private func drop(_ bytes: UnsafeRawBufferPointer, checked: JSONValidator.Result? = nil) -> Screening? {
        let check = checked?.isWellFormed == true ? checked! : JSONValidator.check(bytes, maximumDepth: configuration.maximumDepth)
        if check.isWellFormed { return check.isRecordObject ? .dropped : nil }
        do throws(RecordFormatError) {
            try RecordJSON.validate(bytes, configuration: configuration)
        } catch {
            return .rejected(error)
        }
        return nil // (the two validators accept the same texts)
    }

    /// Decodes `line` into `record`, replacing all of it, when it is a plain record dictionary
    /// and no prefilter applies: the common line, read without building a record for it. Returns
    /// `false` for any other line (a response, an error entry, an array, a bad line), which
    /// ``decode(_:raw:_:)`` then reads; `record` then holds a mix of parts.
    package func decodeRecord(_ line: UnsafeRawBufferPointer, into record: inout Record) -> Bool {
        guard prefilter == nil else { return false }
        return RecordJSON.decodeRecord(line, into: &record, configuration: configuration)
    }

    /// Decodes `line` (without its newline and carriage return); `raw` is the line as read, which
    /// is what a rejects file receives for a whole-line reject.
    package func decode(_ line: UnsafeRawBufferPointer, raw: UnsafeRawBufferPointer,
                        _ emit: (consuming RecordDocumentItem) throws -> Void) throws {
        var first: UInt8 = 0
        for b in line where b != 0x20 && b != 0x09 {
            first = b
            break
        }
        if first == UInt8(ascii: "[") {
            try decodeArray(line, raw: raw, emit)
            return
        }
        var matched = false
        if prefilter != nil, first == UInt8(ascii: "{") {
            switch screen(line) {
            case .dropped:
                try emit(.dropped)
                return
            case .rejected(let error):
                if try decodeCutLine(line, emit) { return }
                try emit(.reject(Self.located(Self.endingInside(error, line), in: line), raw: raw))
                return
            case .matched:
                matched = true
            case .undecided:
                break
            }
        }
        let document: RecordDocument
        do {
            document = try RecordJSON.decodeDocument(line, configuration: configuration)
        } catch {
            if first == UInt8(ascii: "{"), try decodeCutLine(line, emit) { return }
            try emit(.reject(Self.located(Self.endingInside(error, line), in: line), raw: raw))
            return
        }
        try take(document, line: line, raw: raw, emit, matched: matched)
    }

    /// A response on one line with a bad entry, read entry by entry as a pretty-printed one is
    /// (``decodeCut(_:_:)``), its rejects located in the line; `false` when it does not cut.
    private func decodeCutLine(_ line: UnsafeRawBufferPointer, _ emit: (consuming RecordDocumentItem) throws -> Void) throws -> Bool {
        try decodeCut(line) { item in
            switch consume item {
            case .reject(let error, let raw): try emit(.reject(Self.located(error, in: line), raw: raw))
            case let other: try emit(other)
            }
        }
    }

    /// Decodes every JSON document of `text` — whitespace-separated values: pretty-printed
    /// responses, records, arrays — in order, each in one pass. Errors carry byte offsets in
    /// `text` (the caller turns them into lines and columns); a malformed document ends the text,
    /// and the rest of it is one reject.
    package func decodeDocuments(_ text: UnsafeRawBufferPointer, _ emit: (consuming RecordDocumentItem) throws -> Void) throws {
        try decodeDocuments(text, cutsOnFailure: true, emit)
    }

    /// ``decodeDocuments(_:_:)``; with `cutsOnFailure`, a document that fails is cut into its
    /// records (``decodeCut(_:_:)``) when its structure allows.
    private func decodeDocuments(_ text: UnsafeRawBufferPointer, cutsOnFailure: Bool,
                                 _ emit: (consuming RecordDocumentItem) throws -> Void) throws {
        var offset = 0
        while true {
            while offset < text.count, text[offset] == 0x20 || text[offset] == 0x0A || text[offset] == 0x0D || text[offset] == 0x09 {
                offset += 1
            }
            if offset >= text.count { return }
            let rest = UnsafeRawBufferPointer(rebasing: text[offset...])
            if text[offset] == UInt8(ascii: "{") && prefilter == nil {
                // Kept apart from its end, so the document is handed on, not copied.
                let document: RecordDocument
                let end: Int
                do {
                    (document, end) = try RecordJSON.decodeDocument(in: text, at: offset, configuration: configuration)
                } catch {
                    // A record that does not decode (a bad escape, a wrong value) in a response
                    // whose structure holds: its records are read one by one, so that the bad one
                    // is rejected alone, as in a large response or under a prefilter.
                    if cutsOnFailure, try decodeCut(rest, { item in try emit(Self.shifted(item, by: offset)) }) {
                        return
                    }
                    try emit(.reject(error, raw: rest))
                    return
                }
                try take(document, line: text, raw: UnsafeRawBufferPointer(rebasing: text[offset..<end]), emit, start: offset)
                offset = end
                continue
            }
            // Arrays (and records under a prefilter): found whole, then read as a line is.
            let valueEnd: Int
            do {
                valueEnd = try RecordJSON.extentOfValue(in: text, from: offset, configuration: configuration)
            } catch {
                try emit(.reject(error, raw: rest))
                return
            }
            let slice = UnsafeRawBufferPointer(rebasing: text[offset..<valueEnd])
            let base = offset
            // Offsets in the array, made offsets in the text.
            try decode(slice, raw: slice) { item in try emit(Self.shifted(item, by: base)) }
            offset = valueEnd
        }
    }

    /// `item` with its byte offset (a reject's, a zone listing's) moved by `base`: an offset in a
    /// part of a text made an offset in the text.
    private static func shifted(_ item: consuming RecordDocumentItem, by base: Int) -> RecordDocumentItem {
        switch consume item {
        case .reject(var error, let raw):
            error.byteOffset += base
            return .reject(error, raw: raw)
        case .zoneListing(let response, let start):
            return .zoneListing(response, offset: base + start)
        case let other:
            return other
        }
    }

    /// The documents of `text` cut into their records (``DocumentSplitter``), each record decoded
    /// on its own and the rest whole; `false`, with nothing emitted, when `text` does not cut
    /// (its structure is broken, or it is not a response). Error offsets are within `text`.
    private func decodeCut(_ text: UnsafeRawBufferPointer, _ emit: (consuming RecordDocumentItem) throws -> Void) throws -> Bool {
        guard let pieces = DocumentSplitter.pieces(of: text, runBytes: .max, maximumDepth: configuration.maximumDepth,
                                                   validatingDepth: configuration.maximumDepth),
              pieces.contains(where: { if case .records = $0 { true } else { false } }) else { return false }
        for piece in pieces {
            switch piece {
            case .records(let run):
                for (k, range) in run.elements.enumerated() {
                    try decodeElement(text, range, zone: run.zone, checked: k < run.checks.count ? run.checks[k] : nil, emit)
                }
            case .documents(let range):
                let base = range.lowerBound
                try decodeDocuments(UnsafeRawBufferPointer(rebasing: text[range]), cutsOnFailure: false) { item in
                    try emit(Self.shifted(item, by: base))
                }
            }
        }
        return true
    }

    /// Decodes one record of a large response cut into runs (``DocumentSplitter``): the element
    /// at `range` of `text`, an entry of a `records` array — a record (given `zone` when it names
    /// none), a per-record error, or a reject saying what is wrong. Error offsets are within `text`.
    /// With a prefilter, the element is screened first (``screen(_:zone:checked:)``; `checked`: its
    /// ``JSONValidator`` outcome when the caller has it).
    package func decodeElement(_ text: UnsafeRawBufferPointer, _ range: Range<Int>, zone: ZoneID?, checked: JSONValidator.Result? = nil,
                               _ emit: (consuming RecordDocumentItem) throws -> Void) throws {
        let raw = UnsafeRawBufferPointer(rebasing: text[range])
        var matched = false
        if prefilter != nil {
            switch screen(raw, zone: zone, checked: checked) {
            case .dropped:
                try emit(.dropped)
                return
            case .rejected(var error):
                error.byteOffset += range.lowerBound
                try emit(.reject(error, raw: raw))
                return
            case .matched:
                matched = true
            case .undecided:
                break
            }
        }
        let document: RecordDocument
        do {
            document = try RecordJSON.decodeDocument(in: text, at: range.lowerBound, configuration: configuration).0
        } catch {
            try emit(.reject(error, raw: raw))
            return
        }
        switch document {
        case .record(var record):
            if let zone { record.placeInZone(zone) }
            try emit(.record(record, matched: matched))
        case .recordError(let serverError):
            try emit(.reject(RecordFormatError(.serverError, serverError.description, byteOffset: range.lowerBound), raw: raw))
        case .response, .zones:
            try emit(.reject(RecordFormatError(.wrongType, "expected a record in \"records\", found a nested response",
                                               byteOffset: range.lowerBound), raw: raw))
        }
    }

    /// A JSON array of documents (on one line, or a pretty-printed document): each element
    /// decoded where it stands, so errors carry their own position in `line`.
    private func decodeArray(_ line: UnsafeRawBufferPointer, raw: UnsafeRawBufferPointer,
                             _ emit: (consuming RecordDocumentItem) throws -> Void) throws {
        let ranges: [Range<Int>]
        do {
            ranges = try RecordJSON.elementRanges(ofArrayIn: line, configuration: configuration)
        } catch {
            try emit(.reject(Self.located(Self.endingInside(error, line), in: line), raw: raw))
            return
        }
        for range in ranges {
            let element = UnsafeRawBufferPointer(rebasing: line[range])
            let document: RecordDocument
            do {
                document = try RecordJSON.decodeDocument(in: line, at: range.lowerBound, configuration: configuration).0
            } catch {
                try emit(.reject(Self.located(error, in: line), raw: element))
                continue
            }
            try take(document, line: line, raw: element, emit, start: range.lowerBound)
        }
    }

    /// Turns a decoded document into items; `start` is where it begins in `line`.
    private func take(_ document: consuming RecordDocument, line: UnsafeRawBufferPointer, raw: UnsafeRawBufferPointer,
                      _ emit: (consuming RecordDocumentItem) throws -> Void, matched: Bool = false,
                      start: Int = 0) throws {
        switch consume document {
        case .record(let record):
            try emit(.record(record, matched: matched))
        case .recordError(let serverError):
            let error = RecordFormatError(.serverError, serverError.description, byteOffset: start)
            try emit(.reject(Self.located(error, in: line), raw: raw))
        case .response(var response):
            // The entries are swapped out, so the array handed on is the only reference to its
            // storage (reversing a shared one would copy every entry).
            var entries: [RecordsResponse.Entry] = []
            swap(&entries, &response.entries)
            try take(entries, zone: nil, line: line, emit)
        case .zones(var response):
            guard response.carriesRecords else {
                try emit(.zoneListing(response, offset: start))
                return
            }
            for index in response.entries.indices {
                var records: [RecordsResponse.Entry]? = nil
                swap(&records, &response.entries[index].records)
                let zone = response.entries[index]
                if let serverError = zone.serverError {
                    let zoneName = zone.zoneID.map { " (zone \"\($0.zoneName)\")" } ?? ""
                    let error = RecordFormatError(.serverError, serverError.description + zoneName, byteOffset: zone.byteRange.lowerBound)
                    try emit(.reject(Self.located(error, in: line),
                                     raw: UnsafeRawBufferPointer(rebasing: line[zone.byteRange])))
                }
                if let records {
                    try take(records, zone: zone.zoneID, line: line, emit)
                }
            }
        }
    }

    /// Turns the entries of a `records` array into items; records that name no zone get `zone`
    /// (the zone entry of a `changes/zone` response they came in).
    private func take(_ entries: consuming [RecordsResponse.Entry], zone: ZoneID?, line: UnsafeRawBufferPointer,
                      _ emit: (consuming RecordDocumentItem) throws -> Void) throws {
        // Entries are moved out, last first after a reversal in place, not copied: a copy of a
        // record retains every string it holds.
        var entries = entries
        entries.reverse()
        while let entry = entries.popLast() {
            let range = entry.byteRange
            let entryBytes = UnsafeRawBufferPointer(rebasing: line[range])
            switch entry.content {
            case .record(var record):
                if let zone { record.placeInZone(zone) }
                try emit(.record(record, matched: false))
            case .error(let serverError):
                let error = RecordFormatError(.serverError, serverError.description, byteOffset: range.lowerBound)
                try emit(.reject(Self.located(error, in: line), raw: entryBytes))
            case .invalid(let error):
                try emit(.reject(Self.located(error, in: line), raw: entryBytes))
            }
        }
    }

    /// `error` of a line, with a hint when the line ends right after opening an object or an
    /// array, as the first line of a pretty-printed document does: the usual cause is such a
    /// document after compact lines, in a file read as NDJSON because its first line holds a
    /// whole value. (A line cut short, as by an interrupted download, seldom ends so.)
    static func endingInside(_ error: RecordFormatError, _ line: UnsafeRawBufferPointer) -> RecordFormatError {
        guard error.code == .truncated else { return error }
        var end = line.count
        while end > 0, line[end - 1] == 0x20 || line[end - 1] == 0x09 || line[end - 1] == 0x0D { end -= 1 }
        guard end > 0, error.byteOffset >= end, line[end - 1] == UInt8(ascii: "{") || line[end - 1] == UInt8(ascii: "[") else {
            return error
        }
        var hinted = error
        hinted.message += " at the end of the line: NDJSON holds one whole value per line (a file whose first line holds a "
            + "whole value is read as NDJSON, so pretty-printed documents cannot follow compact lines; convert them apart)"
        return hinted
    }

    /// The error with its column in `line` filled in.
    package static func located(_ error: RecordFormatError, in line: UnsafeRawBufferPointer) -> RecordFormatError {
        var located = error
        located.column = lineAndColumn(in: line, offset: error.byteOffset).column
        return located
    }

    /// 1-based line and column (in characters: UTF-8 lead bytes) of `offset` in `text`.
    package static func lineAndColumn(in text: UnsafeRawBufferPointer, offset: Int) -> (line: Int, column: Int) {
        var position = TextPosition()
        position.advance(over: text, count: offset)
        return (position.line, position.column)
    }
}
