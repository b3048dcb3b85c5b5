import FerryIO
import FerryRecords

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What decoding one ``InputUnit`` gave: its records (or their encoding) and, in input order
/// with them, what else happened (rejects, records a transform failed on, over-long lines, zone
/// listings).
///
/// `@unchecked Sendable`: written by one worker, then read by the caller after
/// ``OrderedWorkers/takeHead()`` (or on one thread throughout).
package final class RecordUnitResult: @unchecked Sendable {
    package enum EventKind {
        case reject(RecordFormatError, raw: [UInt8])
        case transformFailure(any Error)
        /// A line over the limit: its bytes in the unit, without its newline.
        case oversizedLine(Range<Int>)
        case zoneListing(ZonesResponse)
        /// The input could not be read (a ``InputUnit/Kind/whole`` unit): the run fails.
        case inputFailure(any Error)
    }

    /// Something to report, with where it happened.
    package struct Event {
        package var kind: EventKind
        /// The 1-based line: within the unit for line units (the caller adds the lines before
        /// it), within the input for document units.
        package var line: Int
        /// The 1-based index among the unit's records and rejects.
        package var localIndex: Int
        /// Records kept before it.
        package var recordsBefore: Int
    }

    let unit: InputUnit
    /// The records kept, when they are not encoded.
    package var records: [Record] = []
    /// The records kept, encoded one per line, when encoding.
    package var output = JSONOutput(capacity: 64)
    /// The end offset in `output` of each record encoded.
    package var recordEnds: [Int] = []
    package var events: [Event] = []
    /// Lines of a line unit (all of them, unless decoding stopped at a failure).
    package var lineCount = 0
    /// Records read, the prefilter's drops included.
    package var recordsRead = 0
    /// Records the prefilter dropped without a full decode.
    package var recordsDropped = 0
    /// Records and rejects of the unit (its last local index).
    package var itemCount = 0
    /// Whether to note where each kept record was (``positions``).
    package var keepsPositions = false
    /// The local index and line of each record in ``records``, when ``keepsPositions``.
    package var positions: [(index: Int, line: Int)] = []

    package init(unit: InputUnit) { self.unit = unit }

    /// Records kept (encoded or not).
    package var keptCount: Int { max(records.count, recordEnds.count) }
}

/// Decodes units of records on whichever thread runs it: lines through ``RecordDocumentDecoder``
/// (plain record lines into one reused record), documents in one pass each; then the transform
/// (filters, projection) and, when asked, the encoding — exactly as a sequential reader and
/// writer would.
package struct RecordUnitDecoder: Sendable {
    /// What to do with each record: `false` drops it; it may change it (projection). The flag
    /// says the prefilter already found that the record matches the predicate.
    package typealias Transform = @Sendable (inout Record, _ filterMatched: Bool) throws -> Bool

    package let decoder: RecordDocumentDecoder
    package let transform: Transform?
    /// Encode kept records as NDJSON lines instead of keeping them.
    package let encodes: Bool
    /// Stop at the first failure (the rest of the unit is not needed).
    package let failsFast: Bool
    package let maximumLineBytes: Int
    /// Records go from input to output unchanged (encoding, no transform, no prefilter): they are
    /// transcoded (``RecordJSON/transcodeRecord(_:into:scratch:configuration:)``), not decoded
    /// into records and encoded again, wherever the transcoder takes them.
    package let passesThrough: Bool
    /// The framer's limits, for inputs read whole here.
    package let framing: JSONFramer.Configuration

    package init(decoder: RecordDocumentDecoder, transform: Transform?, encodes: Bool, failsFast: Bool, maximumLineBytes: Int,
                 framing: JSONFramer.Configuration = .init()) {
        self.framing = framing
        self.decoder = decoder
        self.transform = transform
        self.encodes = encodes
        self.failsFast = failsFast
        self.maximumLineBytes = maximumLineBytes
        passesThrough = encodes && transform == nil && decoder.prefilter == nil
    }

    /// Thrown inside to stop a unit at its first failure.
    private struct Stop: Error {}

    package func decode(_ result: RecordUnitResult) {
        let unit = result.unit
        do {
            try unit.readWhole(as: framing)
        } catch {
            result.events.append(.init(kind: .inputFailure(error), line: 1, localIndex: 0, recordsBefore: 0))
            return
        }
        if encodes {
            let count = unit.bytes.count
            result.output = JSONOutput(capacity: count + count / 8 + 64)
        }
        // The decoding loops reach `self` through a pointer. A closure that captures `self`
        // copies it for every line or record, retaining each reference it holds; both cores
        // retain the same objects, so those atomics fought over cache lines (they took 45% of a
        // filter's CPU time).
        withUnsafePointer(to: self) { me in
            unit.withBytes { _ in
                switch unit.kind {
                case .lines: me.pointee.decodeLines(unit.content, into: result, me: me)
                case .documents: me.pointee.decodeDocuments(unit.content, into: result, me: me,
                                                            lineText: unit.document.isEmpty ? nil : unit.document,
                                                            lineBase: unit.offsetInDocument)
                case .elements: me.pointee.decodeElements(unit, into: result, me: me)
                case .whole: break // read above
                }
            }
        }
    }

    /// A decoded record: transformed, then kept or encoded.
    private func take(_ record: inout Record, matched: Bool = false, into result: RecordUnitResult, line: Int,
                      localIndex: Int) throws {
        result.recordsRead += 1
        if let transform {
            do {
                guard try transform(&record, matched) else { return }
            } catch {
                // Not matched, and counted; never an error of the data (``RecordPipeline/transformFailed(_:count:)``).
                result.events.append(.init(kind: .transformFailure(error), line: line, localIndex: localIndex,
                                           recordsBefore: result.keptCount))
                return
            }
        }
        if encodes {
            RecordJSON.encode(record, into: &result.output)
            result.output.append(0x0A)
            result.recordEnds.append(result.output.count)
        } else {
            result.records.append(record)
            if result.keepsPositions { result.positions.append((localIndex, line)) }
        }
    }

    /// Counts a record transcoded into the unit's output and ends its line.
    @inline(__always)
    private func passed(_ result: RecordUnitResult) {
        result.recordsRead += 1
        result.output.append(0x0A)
        result.recordEnds.append(result.output.count)
    }

    /// Lines; `me` points at `self` (see ``decode(_:)``).
    private func decodeLines(_ bytes: UnsafeRawBufferPointer, into result: RecordUnitResult, me: UnsafePointer<Self>) {
        guard let base = bytes.baseAddress else { return }
        var localIndex = 0
        var line = 0
        defer {
            result.lineCount = line
            result.itemCount = localIndex
        }
        // Plain record lines are decoded into this one value, line after line (see
        // ``RecordDocumentDecoder/decodeRecord(_:into:)``); other lines go through `decode`.
        var reused = Record(recordName: "")
        var scratch = TranscodingScratch()
        var start = 0
        while start < bytes.count {
            line += 1
            let newline = memchr(base + start, 0x0A, bytes.count - start).map { UnsafeRawPointer($0) - base } ?? bytes.count
            let rawEnd = min(newline + 1, bytes.count)
            defer { start = rawEnd }
            var contentEnd = newline
            if contentEnd > start && bytes[contentEnd - 1] == 0x0D { contentEnd -= 1 }
            if newline - start > maximumLineBytes {
                localIndex += 1
                result.events.append(.init(kind: .oversizedLine(start..<newline), line: line, localIndex: localIndex,
                                           recordsBefore: result.keptCount))
                if failsFast { return }
                continue
            }
            let content = UnsafeRawBufferPointer(rebasing: bytes[start..<contentEnd])
            if RecordDocumentDecoder.isBlank(content) { continue }
            let raw = UnsafeRawBufferPointer(rebasing: bytes[start..<newline])
            if passesThrough && RecordJSON.transcodeRecord(content, into: &result.output, scratch: &scratch,
                                                           configuration: decoder.configuration) {
                localIndex += 1
                passed(result)
                continue
            }
            do {
                if decoder.decodeRecord(content, into: &reused) {
                    localIndex += 1
                    try take(&reused, into: result, line: line, localIndex: localIndex)
                    continue
                }
                try decoder.decode(content, raw: raw) { item in
                    localIndex += 1
                    if try !me.pointee.handle(item, into: result, line: line, localIndex: localIndex) { localIndex -= 1 }
                }
            } catch {
                return
            }
        }
    }

    /// Whole documents; positions are counted in `lineText` (the whole input, when the unit is
    /// part of it), where the unit starts at `lineBase`.
    private func decodeDocuments(_ text: UnsafeRawBufferPointer, into result: RecordUnitResult, me: UnsafePointer<Self>,
                                 lineText: UnsafeRawBufferPointer? = nil, lineBase: Int = 0) {
        var localIndex = 0
        defer { result.itemCount = localIndex }
        // Responses are transcoded while the transcoder takes them; from the first it does not,
        // the rest of the text is decoded.
        var offset = 0
        if passesThrough {
            var scratch = TranscodingScratch()
            while true {
                while offset < text.count, text[offset] == 0x20 || text[offset] == 0x0A || text[offset] == 0x0D || text[offset] == 0x09 {
                    offset += 1
                }
                guard offset < text.count, text[offset] == UInt8(ascii: "{") else { break }
                let before = result.recordEnds.count
                guard let end = RecordJSON.transcodeResponse(in: text, at: offset, into: &result.output, recordEnds: &result.recordEnds,
                                                             scratch: &scratch, configuration: decoder.configuration) else { break }
                let records = result.recordEnds.count - before
                localIndex += records
                result.recordsRead += records
                offset = end
            }
            if offset >= text.count { return }
        }
        let rest = UnsafeRawBufferPointer(rebasing: text[offset...])
        /// Hands on an item whose offsets count from `base` in `rest`, placed in lines.
        func deliver(_ item: consuming RecordDocumentItem, base: Int) throws {
            localIndex += 1
            var line = 1
            var located = item
            if case .reject(var error, let raw) = located {
                let position = RecordDocumentDecoder.lineAndColumn(in: lineText ?? text, offset: lineBase + offset + base + error.byteOffset)
                line = position.line
                error.line = position.line
                error.column = position.column
                located = .reject(error, raw: raw)
            } else if case .zoneListing(_, let start) = located {
                line = RecordDocumentDecoder.lineAndColumn(in: lineText ?? text, offset: lineBase + offset + base + start).line
            }
            if try !me.pointee.handle(located, into: result, line: line, localIndex: localIndex) { localIndex -= 1 }
        }
        do {
            // Under a prefilter, responses are cut into their records, and each is screened on
            // its own (a whole response would always hold the literals of some record). (Chosen
            // here, not by the decoder's documents entry point: the items are handed on by one
            // closure each way, inlined; through that entry point each item was copied.)
            if decoder.prefilter != nil,
               let pieces = DocumentSplitter.pieces(of: rest, runBytes: Int.max, maximumDepth: framing.maximumDepth,
                                                        validatingDepth: decoder.configuration.maximumDepth) {
                for piece in pieces {
                    switch piece {
                    case .records(let run):
                        for (k, range) in run.elements.enumerated() {
                            try decoder.decodeElement(rest, range, zone: run.zone, checked: k < run.checks.count ? run.checks[k] : nil) { item in
                                try deliver(item, base: 0)
                            }
                        }
                    case .documents(let range):
                        try decoder.decodeDocuments(UnsafeRawBufferPointer(rebasing: rest[range])) { item in
                            try deliver(item, base: range.lowerBound)
                        }
                    }
                }
                return
            }
            try decoder.decodeDocuments(rest) { item in try deliver(item, base: 0) }
        } catch {
            return
        }
    }

    /// The records of a large response cut into runs, each decoded on its own.
    private func decodeElements(_ unit: InputUnit, into result: RecordUnitResult, me: UnsafePointer<Self>) {
        var localIndex = 0
        defer { result.itemCount = localIndex }
        let text = unit.bytes
        var zone = JSONOutput(capacity: 128)
        if let zoneID = unit.zone { RecordJSON.encode(zoneID, into: &zone) }
        var scratch = TranscodingScratch()
        do {
            for range in unit.elements {
                if passesThrough && RecordJSON.transcodeElement(text, range, zone: unit.zone == nil ? nil : zone.bytes,
                                                                into: &result.output, scratch: &scratch,
                                                                configuration: decoder.configuration) {
                    localIndex += 1
                    passed(result)
                    continue
                }
                try decoder.decodeElement(text, range, zone: unit.zone) { item in
                    localIndex += 1
                    var line = 1
                    var located = item
                    if case .reject(var error, let raw) = located {
                        let position = RecordDocumentDecoder.lineAndColumn(in: unit.document, offset: unit.offsetInDocument + error.byteOffset)
                        line = position.line
                        error.line = position.line
                        error.column = position.column
                        located = .reject(error, raw: raw)
                    }
                    if try !me.pointee.handle(located, into: result, line: line, localIndex: localIndex) { localIndex -= 1 }
                }
            }
        } catch {
            return
        }
    }

    /// One item of a line or document; returns whether it counts among records and rejects.
    private func handle(_ item: consuming RecordDocumentItem, into result: RecordUnitResult, line: Int, localIndex: Int) throws -> Bool {
        switch consume item {
        case .record(var record, let matched):
            try take(&record, matched: matched, into: result, line: line, localIndex: localIndex)
        case .dropped:
            result.recordsRead += 1
            result.recordsDropped += 1
        case .reject(let error, let raw):
            result.events.append(.init(kind: .reject(error, raw: Array(raw)), line: line, localIndex: localIndex,
                                       recordsBefore: result.keptCount))
            if failsFast { throw Stop() }
        case .zoneListing(let response, _):
            result.events.append(.init(kind: .zoneListing(response), line: line, localIndex: localIndex - 1,
                                       recordsBefore: result.keptCount))
            return false
        }
        return true
    }
}
