// Transcoding of whole responses: each record of a `records` response or of a `changes/zone`
// response written as an NDJSON line, as ``RecordJSON/transcodeResponse(in:at:into:recordEnds:scratch:configuration:)``
// promises (see RecordTranscoding.swift for what the transcoder takes). ``ResponseWalker`` walks
// the response; the visitors below take the parts the transcoder takes and stop the walk at
// anything else, and the caller then decodes the response.

extension JSONScanner {
    /// See ``RecordJSON/transcodeResponse(in:at:into:recordEnds:scratch:configuration:)``.
    mutating func transcodeResponse(into out: inout JSONOutput, recordEnds: inout [Int],
                                    scratch: inout TranscodingScratch) throws(RecordFormatError) -> Bool {
        skipWhitespace()
        guard current == UInt8(ascii: "{") else { return false }
        try beginObject()
        return try withUnsafeMutablePointer(to: &out) { (out) throws(RecordFormatError) -> Bool in
            try withUnsafeMutablePointer(to: &recordEnds) { (recordEnds) throws(RecordFormatError) -> Bool in
                try withUnsafeMutablePointer(to: &scratch) { (scratch) throws(RecordFormatError) -> Bool in
                    var transcoder = ResponseTranscoder(records: RecordsTranscoder(out: out, recordEnds: recordEnds, scratch: scratch))
                    var first = true
                    guard try ResponseWalker.walkMembers(&self, first: &first, &transcoder) else { return false }
                    // Both arrays (the decoder keeps `zones` as plain JSON then), or neither: decoded.
                    let arrays = transcoder.seen & (CloudKitKey.records.bit | CloudKitKey.zones.bit)
                    return arrays == CloudKitKey.records.bit || arrays == CloudKitKey.zones.bit
                }
            }
        }
    }
}

/// Transcodes the entries of a `records` array, each a record the transcoder takes, into the
/// caller's output: a line each, its end noted.
///
/// The output, the record ends and the scratch space are the caller's, reached through pointers
/// that live while the caller's walk does.
private struct RecordsTranscoder {
    let out: UnsafeMutablePointer<JSONOutput>
    let recordEnds: UnsafeMutablePointer<[Int]>
    let scratch: UnsafeMutablePointer<TranscodingScratch>
    /// The encoded zone ID given to records that name none (a `changes/zone` entry's).
    var zone: UnsafeRawBufferPointer?

    /// Transcodes the `records` array at the scanner; `false` at an entry the transcoder does
    /// not take.
    func transcode(_ s: inout JSONScanner) throws(RecordFormatError) -> Bool {
        var entries = try ResponseWalker.RecordEntries(&s)
        while try entries.next(&s) {
            guard try s.transcodeRecord(into: &out.pointee, zone: zone, scratch: &scratch.pointee) else { return false }
            out.pointee.append(0x0A)
            recordEnds.pointee.append(out.pointee.count)
        }
        return true
    }
}

/// The members of a response the transcoder takes: `records`, or `zones` whose entries carry
/// records, each once, and tokens and flags.
private struct ResponseTranscoder: ResponseVisitor {
    var records: RecordsTranscoder
    /// The response's members seen (each is taken once).
    var seen: UInt32 = 0

    mutating func visitMember(_ member: CloudKitKey?, key: JSONKey, _ s: inout JSONScanner) throws(RecordFormatError) -> Bool {
        // Other keys (a record's, an error entry's, unknown ones) are for the decoder.
        guard let member, seen & member.bit == 0 else { return false }
        seen |= member.bit
        switch member {
        case .records:
            guard s.current == UInt8(ascii: "[") else { return false }
            return try records.transcode(&s)
        case .zones:
            guard s.current == UInt8(ascii: "[") else { return false }
            var entries = ZoneEntriesTranscoder(records: records)
            // A listing of zones (no entry with records) is for the decoder.
            guard try ResponseWalker.walkZoneEntries(&s, &entries) else { return false }
            return entries.carriesRecords
        case .moreComing:
            guard s.current == UInt8(ascii: "t") || s.current == UInt8(ascii: "f") else { return false }
            _ = try s.readBool()
            return true
        case .continuationMarker, .syncToken, .metaSyncToken:
            // A token: kept by the decoder when a string, as an unknown member otherwise.
            _ = try s.readValue()
            return true
        default:
            return false
        }
    }
}

/// The entries of a `changes/zone` response's `zones`: a zone ID (before the records), tokens
/// and flags, and records given the entry's zone when they name none; an entry with anything
/// else (an error entry) is for the decoder.
private struct ZoneEntriesTranscoder: ZoneEntryVisitor, ~Copyable {
    var records: RecordsTranscoder
    /// Whether an entry had records.
    var carriesRecords = false
    /// The entry's zone ID, encoded.
    private var zone = JSONOutput(capacity: 128)
    /// The entry's members seen (each is taken once).
    private var seen: UInt32 = 0

    init(records: RecordsTranscoder) { self.records = records }

    mutating func beginZoneEntry(at start: Int) {
        zone.removeAll()
        seen = 0
    }

    mutating func visitZoneEntryMember(_ member: CloudKitKey?, key: JSONKey, _ s: inout JSONScanner) throws(RecordFormatError) -> Bool {
        guard let member, seen & member.bit == 0 else { return false }
        seen |= member.bit
        switch member {
        case .zoneID:
            // The records read so far named no zone of their own? They would have had this one.
            guard seen & CloudKitKey.records.bit == 0 else { return false }
            return try s.transcodeZoneID(into: &zone)
        case .syncToken:
            guard s.current == UInt8(ascii: "\"") else { return false }
            try s.skipCheckedString()
            return true
        case .records:
            guard s.current == UInt8(ascii: "[") else { return false }
            carriesRecords = true
            // `zone` is not written while its bytes are in use.
            var inZone = records
            inZone.zone = seen & CloudKitKey.zoneID.bit != 0 ? zone.bytes : nil
            return try inZone.transcode(&s)
        case .moreComing, .deleted, .purged:
            guard s.current == UInt8(ascii: "t") || s.current == UInt8(ascii: "f") else { return false }
            _ = try s.readBool()
            return true
        default:
            return false
        }
    }

    mutating func endZoneEntry(_ range: Range<Int>, _ s: inout JSONScanner) throws(RecordFormatError) -> Bool { true }
}
