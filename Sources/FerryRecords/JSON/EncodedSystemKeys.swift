// The system keys of a record line the encoder wrote, found where they lie in the line.
//
// `RecordJSON.encode` writes every system key before `fields` (see RecordEncoding.swift), so a
// reader of its lines that wants only the system keys (a store's columns) reads the start of
// each line and stops at the first member that is not one: the fields, most of the bytes, are
// not scanned at all. Only the encoder's exact shapes are taken; for anything else (an escaped
// string, a stamp or zone ID with members the encoder writes only from unknown keys) the reader
// says no and the caller decodes the line the general way.

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
    /// (`shortGUID` included), normally `fields`.
    package static func readEncodedSystemKeys(_ line: UnsafeRawBufferPointer, into keys: inout EncodedSystemKeys) -> Bool {
        // The caller's promise is not checked beyond this: the line ends its object and is
        // UTF-8 (both cheap next to a scan), so a line cut short or a stray byte is declined.
        guard let base = line.baseAddress, line.last == UInt8(ascii: "}"),
              UTF8Check.firstProblem(base.assumingMemoryBound(to: UInt8.self), from: 0, to: line.count) == nil else { return false }
        var reader = EncodedLineReader(base: base.assumingMemoryBound(to: UInt8.self), count: line.count)
        keys = EncodedSystemKeys()
        guard reader.match("{\"recordName\":"), let name = reader.string() else { return false }
        keys.recordName = name
        var last = 0
        while reader.position < reader.count {
            if reader.peek == UInt8(ascii: "}") { return true }
            guard reader.match(",\"") else { return false }
            // The first member after the system keys: the rest holds none.
            guard let key = reader.keyIndex() else { return true }
            guard key > last else { return false }
            last = key
            switch key {
            case 1: guard let v = reader.string() else { return false }; keys.recordType = v
            case 2:
                let start = reader.position
                guard reader.zoneID() else { return false }
                keys.zoneID = start..<reader.position
            case 3: guard let v = reader.string() else { return false }; keys.recordChangeTag = v
            case 4: guard reader.stamp(&keys.createdAt, &keys.createdBy) else { return false }
            case 5: guard reader.stamp(&keys.modifiedAt, &keys.modifiedBy) else { return false }
            case 6: guard reader.match("true") || reader.match("false") else { return false }
            case 7: guard let v = reader.reference() else { return false }; keys.parentName = v
            case 8: guard let v = reader.reference() else { return false }; keys.shareName = v
            default: guard reader.string() != nil else { return false } // shortGUID
            }
        }
        return false
    }
}

/// A cursor over an encoded line, taking only the encoder's shapes.
private struct EncodedLineReader {
    let base: UnsafePointer<UInt8>
    let count: Int
    var position = 0

    init(base: UnsafePointer<UInt8>, count: Int) {
        self.base = base
        self.count = count
    }

    var peek: UInt8 { base[position] }

    /// Consumes `literal` if the line continues with it.
    mutating func match(_ literal: StaticString) -> Bool {
        let n = literal.utf8CodeUnitCount
        guard count - position >= n, memcmp(base + position, literal.utf8Start, n) == 0 else { return false }
        position += n
        return true
    }

    /// A string without escapes: the range of its contents.
    mutating func string() -> Range<Int>? {
        guard position < count, base[position] == UInt8(ascii: "\"") else { return nil }
        let start = position + 1
        var k = start
        while k < count {
            let byte = base[k]
            if byte == UInt8(ascii: "\"") {
                position = k + 1
                return start..<k
            }
            if byte == UInt8(ascii: "\\") { return nil }
            k += 1
        }
        return nil
    }

    /// An integer as `appendInteger` writes it.
    mutating func integer() -> Int64? {
        var k = position
        let negative = k < count && base[k] == UInt8(ascii: "-")
        if negative { k += 1 }
        let first = k
        var magnitude: UInt64 = 0
        while k < count, base[k] &- UInt8(ascii: "0") < 10 {
            let (times, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times.addingReportingOverflow(UInt64(base[k] &- UInt8(ascii: "0")))
            guard !o1, !o2 else { return nil }
            magnitude = sum
            k += 1
        }
        guard k > first, k - first == 1 || base[first] != UInt8(ascii: "0") else { return nil }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            position = k
            return magnitude == UInt64(Int64.max) + 1 ? .min : -Int64(magnitude)
        }
        guard magnitude <= UInt64(Int64.max) else { return nil }
        position = k
        return Int64(magnitude)
    }

    /// The key after `,"`, through its `":`: its place in the encoder's order of a record's
    /// system keys (1 recordType … 9 shortGUID), or `nil` for any other key.
    mutating func keyIndex() -> Int? {
        let index: Int
        if match("recordType\":") { index = 1 }
        else if match("zoneID\":") { index = 2 }
        else if match("recordChangeTag\":") { index = 3 }
        else if match("created\":") { index = 4 }
        else if match("modified\":") { index = 5 }
        else if match("deleted\":") { index = 6 }
        else if match("parent\":") { index = 7 }
        else if match("share\":") { index = 8 }
        else if match("shortGUID\":") { index = 9 }
        else { return nil }
        return index
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
