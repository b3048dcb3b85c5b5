// The system keys of a record line the encoder wrote, found where they lie in the line.
//
// `RecordJSON.encode` writes every system key before `fields` (see RecordEncoding.swift), so a
// reader of its lines that wants only the system keys (a store's columns) reads the start of
// each line and stops at the first member that is not one: the fields, most of the bytes, are
// not parsed (only checked to be UTF-8). Only the encoder's exact shapes are taken; for anything
// else (an escaped string, a stamp or zone ID with members the encoder writes only from unknown
// keys) the reader says no and the caller decodes the line the general way.

import FerryInternals

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the system keys of one encoded record line lie: byte ranges of the line, strings
/// without their quotes (and without escapes, so their bytes are the decoded text).
package struct EncodedSystemKeys {
    package var recordName: Range<Int> = 0..<0
    package var recordType: Range<Int>?
    /// The whole `zoneID` object.
    package var zoneID: Range<Int>?
    package var recordChangeTag: Range<Int>?
    package var createdAt: Int64?
    package var createdBy: Range<Int>?
    package var modifiedAt: Int64?
    package var modifiedBy: Range<Int>?
    package var parentName: Range<Int>?
    package var shareName: Range<Int>?

    package init() {}
}

extension RecordJSON {
    /// Finds the system keys of `line`, one record dictionary as ``encode(_:into:)`` writes it
    /// (the caller's promise: members in the encoder's order, compact); `false` when the line
    /// has a shape this reader does not take, does not end with `}` or is not UTF-8, and then
    /// `keys` is meaningless. Parses only up to the first member after the system keys
    /// (`shortGUID` included), normally `fields`: a line that breaks the promise after that
    /// point (a system key after `fields`, a cut field) is not noticed.
    package static func readEncodedSystemKeys(_ line: UnsafeRawBufferPointer, into keys: inout EncodedSystemKeys) -> Bool {
        // Cheap next to a parse: the line ends its object and is UTF-8.
        guard let base = line.baseAddress, line.last == UInt8(ascii: "}"),
              UTF8Check.firstProblem(base.assumingMemoryBound(to: UInt8.self), from: 0, to: line.count) == nil else { return false }
        var reader = EncodedLineReader(JSONScanner(line))
        keys = EncodedSystemKeys()
        guard reader.match(JSONScanner.canonicalMembers[0].prefix), let name = reader.string() else { return false }
        keys.recordName = name
        // The place in the encoder's order of the next system key the line may hold.
        var next = 1
        while true {
            if reader.scanner.current == UInt8(ascii: "}") { return reader.scanner.position == line.count - 1 }
            guard let key = reader.systemKey() else {
                // The first member after the system keys; the rest holds none.
                return reader.match(",\"")
            }
            guard key >= next else { return false }
            next = key + 1
            switch key {
            case 1: guard let v = reader.string() else { return false }; keys.recordType = v
            case 2:
                let start = reader.scanner.position
                guard reader.zoneID() else { return false }
                keys.zoneID = start..<reader.scanner.position
            case 3: guard let v = reader.string() else { return false }; keys.recordChangeTag = v
            case 4: guard reader.stamp(&keys.createdAt, &keys.createdBy) else { return false }
            case 5: guard reader.stamp(&keys.modifiedAt, &keys.modifiedBy) else { return false }
            case 6: guard reader.match("true") || reader.match("false") else { return false }
            case 7: guard let v = reader.reference() else { return false }; keys.parentName = v
            case 8: guard let v = reader.reference() else { return false }; keys.shareName = v
            default: guard reader.string() != nil else { return false } // shortGUID
            }
        }
    }
}

/// A cursor over an encoded line, taking only the encoder's shapes, reading strings and numbers
/// with the scanner's own readers.
private struct EncodedLineReader {
    var scanner: JSONScanner

    init(_ scanner: JSONScanner) { self.scanner = scanner }

    /// Consumes `literal` if the line continues with it.
    mutating func match(_ literal: StaticString) -> Bool {
        let n = literal.utf8CodeUnitCount
        guard scanner.end - scanner.position >= n, memcmp(scanner.base + scanner.position, literal.utf8Start, n) == 0 else { return false }
        scanner.position += n
        return true
    }

    /// A string without escapes: the range of its contents.
    mutating func string() -> Range<Int>? {
        guard scanner.current == UInt8(ascii: "\"") else { return nil }
        let start = scanner.position + 1
        guard let (stop, flags) = try? scanner.scanStringBody(), flags & JSONScanner.escapeFlag == 0 else { return nil }
        return start..<stop
    }

    /// An integer within Int64.
    mutating func integer() -> Int64? {
        guard let number = try? scanner.readNumber() else { return nil }
        return number.exactInteger
    }

    /// Consumes `,"key":` when the key is a record's system key (`recordType` … `shortGUID`):
    /// its place in the encoder's order.
    mutating func systemKey() -> Int? {
        for index in 1...9 where match(JSONScanner.canonicalMembers[index].prefix) { return index }
        return nil
    }

    /// `{"zoneName":…[,"ownerRecordName":…][,"zoneType":…]}`.
    mutating func zoneID() -> Bool {
        guard match("{\"zoneName\":"), string() != nil else { return false }
        if match(",\"ownerRecordName\":") { guard string() != nil else { return false } }
        if match(",\"zoneType\":") { guard string() != nil else { return false } }
        return match("}")
    }

    /// `{["timestamp":…][,]["userRecordName":…][,"deviceID":…]}`.
    mutating func stamp(_ timestamp: inout Int64?, _ user: inout Range<Int>?) -> Bool {
        guard match("{") else { return false }
        var comma = false
        if match("\"timestamp\":") {
            guard let t = integer() else { return false }
            timestamp = t
            comma = true
        }
        if match(comma ? ",\"userRecordName\":" : "\"userRecordName\":") {
            guard let u = string() else { return false }
            user = u
            comma = true
        }
        if match(comma ? ",\"deviceID\":" : "\"deviceID\":") {
            guard string() != nil else { return false }
        }
        return match("}")
    }

    /// `{"recordName":…[,"zoneID":…][,"action":…]}`: the range of the record name.
    mutating func reference() -> Range<Int>? {
        guard match("{\"recordName\":"), let name = string() else { return nil }
        if match(",\"zoneID\":") { guard zoneID() else { return nil } }
        if match(",\"action\":") { guard string() != nil else { return nil } }
        return match("}") ? name : nil
    }
}
