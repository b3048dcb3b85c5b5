import FerryInternals

/// One 512-byte tar header: encoding ustar headers and pax records, parsing ustar, pax and GNU
/// headers (POSIX.1-2001 `pax`, and GNU tar's default format).
struct TarHeader {
    /// The size of a tar block.
    static let blockSize = 512
    /// The largest size the 11 octal digits of a ustar size field hold (8 GiB − 1).
    static let maximumOctalSize = 0o77777777777

    /// Type flags Ferry reads or refuses.
    enum TypeFlag {
        static let regular = UInt8(ascii: "0")
        static let regularOld: UInt8 = 0
        static let hardLink = UInt8(ascii: "1")
        static let symbolicLink = UInt8(ascii: "2")
        static let characterDevice = UInt8(ascii: "3")
        static let blockDevice = UInt8(ascii: "4")
        static let directory = UInt8(ascii: "5")
        static let fifo = UInt8(ascii: "6")
        static let contiguous = UInt8(ascii: "7")
        static let paxExtended = UInt8(ascii: "x")
        static let paxGlobal = UInt8(ascii: "g")
        static let gnuLongName = UInt8(ascii: "L")
        static let gnuLongLink = UInt8(ascii: "K")
    }

    /// The name field, joined with the ustar prefix when there is one.
    var name: String
    /// The link target field (for links, which Ferry refuses).
    var linkName: String
    /// The member's data size in bytes.
    var size: Int
    /// The type flag byte.
    var typeFlag: UInt8

    // MARK: - Writing

    /// A ustar header for a regular file (or a pax `x` header) named `name`, whose name must fit
    /// in 100 bytes (longer names go in a pax record; callers pass a truncated stand-in).
    static func encode(name: String, size: Int, modificationTime: Int64, typeFlag: UInt8) -> [UInt8] {
        var block = [UInt8](repeating: 0, count: blockSize)
        func put(_ bytes: some Collection<UInt8>, at offset: Int, width: Int) {
            for (i, byte) in bytes.prefix(width).enumerated() { block[offset + i] = byte }
        }
        func putOctal(_ value: Int, at offset: Int, width: Int) {
            let digits = Array(String(value, radix: 8).utf8)
            let padded = [UInt8](repeating: UInt8(ascii: "0"), count: max(0, width - 1 - digits.count)) + digits
            put(padded, at: offset, width: width - 1)
        }
        put(Array(name.utf8), at: 0, width: 100)
        putOctal(0o644, at: 100, width: 8)
        putOctal(0, at: 108, width: 8)
        putOctal(0, at: 116, width: 8)
        putOctal(size <= maximumOctalSize ? size : 0, at: 124, width: 12)
        putOctal(Int(max(0, min(modificationTime, Int64(maximumOctalSize)))), at: 136, width: 12)
        block[156] = typeFlag
        put(Array("ustar".utf8) + [0] + Array("00".utf8), at: 257, width: 8)
        // Checksum: computed with the field as eight spaces, written as six octal digits, NUL, space.
        for i in 148..<156 { block[i] = UInt8(ascii: " ") }
        let sum = block.reduce(0) { $0 + Int($1) }
        putOctal(sum, at: 148, width: 7)
        block[154] = 0
        block[155] = UInt8(ascii: " ")
        return block
    }

    /// One pax record, `"<length> <key>=<value>\n"`, where the length counts itself.
    static func paxRecord(key: String, value: String) -> [UInt8] {
        let body = " \(key)=\(value)\n"
        let bodyLength = body.utf8.count
        var length = bodyLength + 1
        while String(length).utf8.count + bodyLength != length { length = String(length).utf8.count + bodyLength }
        return Array((String(length) + body).utf8)
    }

    // MARK: - Reading

    /// Whether every byte of `block` is zero (an end-of-archive block).
    static func isZeroBlock(_ block: UnsafeRawBufferPointer) -> Bool {
        !block.contains { $0 != 0 }
    }

    /// Whether `block` has ustar magic (POSIX `ustar\0` or GNU `ustar `) and a valid checksum.
    static func looksLikeHeader(_ block: UnsafeRawBufferPointer) -> Bool {
        guard block.count >= blockSize, magic(block) != nil else { return false }
        return (try? checkChecksum(block)) != nil
    }

    private enum Magic { case posix, gnu }

    private static func magic(_ block: UnsafeRawBufferPointer) -> Magic? {
        let ustar = Array("ustar".utf8)
        guard Array(block[257..<262]) == ustar else { return nil }
        if block[262] == 0 { return .posix }
        if block[262] == UInt8(ascii: " ") && block[263] == UInt8(ascii: " ") && block[264] == 0 { return .gnu }
        return nil
    }

    private static func checkChecksum(_ block: UnsafeRawBufferPointer) throws(TarParseFailure) {
        let stored = try number(block, 148, 8, field: "checksum")
        var unsigned = 0
        var signed = 0
        for i in 0..<blockSize {
            let byte = (148..<156).contains(i) ? UInt8(ascii: " ") : block[i]
            unsigned += Int(byte)
            signed += Int(Int8(bitPattern: byte))
        }
        guard stored == unsigned || stored == signed else {
            throw TarParseFailure("expected header checksum \(stored), found \(unsigned)")
        }
    }

    /// Parses a header block (not all zeros).
    static func parse(_ block: UnsafeRawBufferPointer) throws(TarParseFailure) -> TarHeader {
        guard let kind = magic(block) else {
            throw TarParseFailure("expected a ustar header (magic `ustar` at byte 257), found other bytes")
        }
        try checkChecksum(block)
        var name = string(block, 0, 100)
        if kind == .posix {
            let prefix = string(block, 345, 155)
            if !prefix.isEmpty { name = prefix + "/" + name }
        }
        let size = try number(block, 124, 12, field: "size")
        return TarHeader(name: name, linkName: string(block, 157, 100), size: size, typeFlag: block[156])
    }

    /// A NUL-terminated field as UTF-8 (invalid bytes replaced).
    private static func string(_ block: UnsafeRawBufferPointer, _ offset: Int, _ width: Int) -> String {
        let field = block[offset..<(offset + width)]
        let end = field.firstIndex(of: 0) ?? field.endIndex
        return String(decoding: field[offset..<end], as: UTF8.self)
    }

    /// A numeric field: octal digits (space or NUL padded) or GNU base-256 (high bit set).
    private static func number(_ block: UnsafeRawBufferPointer, _ offset: Int, _ width: Int,
                               field: String) throws(TarParseFailure) -> Int {
        let bytes = block[offset..<(offset + width)]
        if bytes.first! & 0x80 != 0 {
            guard bytes.first! == 0x80 else { throw TarParseFailure("expected a non-negative base-256 \(field)") }
            var value = 0
            for byte in bytes.dropFirst() {
                guard value <= (Int.max >> 8) else { throw TarParseFailure("the base-256 \(field) is too large") }
                value = value << 8 | Int(byte)
            }
            return value
        }
        var value = 0
        var seenDigit = false
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "7"):
                guard value <= (Int.max >> 3) else { throw TarParseFailure("the octal \(field) is too large") }
                value = value << 3 | Int(byte - UInt8(ascii: "0"))
                seenDigit = true
            case UInt8(ascii: " ") where !seenDigit:
                continue
            case 0, UInt8(ascii: " "):
                return value
            default:
                throw TarParseFailure("expected octal digits in the \(field) field, found byte \(Hex.prefixed(byte))")
            }
        }
        return value
    }

    /// Parses pax extended header records into key/value pairs.
    static func parsePax(_ data: [UInt8]) throws(TarParseFailure) -> [String: String] {
        var result: [String: String] = [:]
        var index = 0
        while index < data.count {
            guard let space = data[index...].firstIndex(of: UInt8(ascii: " ")),
                  let length = Int(String(decoding: data[index..<space], as: UTF8.self)),
                  length > space - index, length <= data.count - index,
                  data[index + length - 1] == 0x0A else {
                throw TarParseFailure("expected pax records `<length> <key>=<value>\\n` at byte \(index) of the pax header")
            }
            let record = data[(space + 1)..<(index + length - 1)]
            guard let equals = record.firstIndex(of: UInt8(ascii: "=")) else {
                throw TarParseFailure("expected `key=value` in the pax record at byte \(index)")
            }
            let key = String(decoding: record[record.startIndex..<equals], as: UTF8.self)
            result[key] = String(decoding: record[(equals + 1)...], as: UTF8.self)
            index += length
        }
        return result
    }
}

/// Why a header could not be parsed; the reader adds the archive, member and offset.
struct TarParseFailure: Error {
    var message: String
    init(_ message: String) { self.message = message }
}
