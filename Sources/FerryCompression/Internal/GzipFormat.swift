/// The fixed parts of RFC 1952: the member header Ferry writes, the trailer, and header flags.
enum GzipFormat {
    /// The two magic bytes every gzip member starts with.
    static let magic: (UInt8, UInt8) = (0x1f, 0x8b)
    /// Compression method 8: deflate.
    static let methodDeflate: UInt8 = 8
    /// The deflate window zlib's block scheme primes each block with.
    static let dictionarySize = 32 << 10
    /// The length of the header Ferry writes (``header(level:)``).
    static let headerSize = 10
    /// The length of a member's trailer (``trailer(crc:length:)``).
    static let trailerSize = 8

    /// Header flag bits (FLG).
    enum Flag {
        static let text: UInt8 = 0x01
        static let headerCRC: UInt8 = 0x02
        static let extra: UInt8 = 0x04
        static let name: UInt8 = 0x08
        static let comment: UInt8 = 0x10
        static let reserved: UInt8 = 0xe0
    }

    /// A 10-byte header with no name and no timestamp (MTIME 0), so output is reproducible;
    /// XFL says "best" for level 9 and "fastest" for level 1, OS is 3 (Unix) as gzip writes.
    static func header(level: Int) -> [UInt8] {
        let extraFlags: UInt8 = level == 9 ? 2 : (level == 1 ? 4 : 0)
        return [magic.0, magic.1, methodDeflate, 0, 0, 0, 0, 0, extraFlags, 3]
    }

    /// The 8-byte trailer: CRC-32 and ISIZE (length modulo 2^32), both little-endian.
    static func trailer(crc: UInt32, length: UInt64) -> [UInt8] {
        let size = UInt32(truncatingIfNeeded: length)
        return [
            UInt8(truncatingIfNeeded: crc), UInt8(truncatingIfNeeded: crc >> 8),
            UInt8(truncatingIfNeeded: crc >> 16), UInt8(truncatingIfNeeded: crc >> 24),
            UInt8(truncatingIfNeeded: size), UInt8(truncatingIfNeeded: size >> 8),
            UInt8(truncatingIfNeeded: size >> 16), UInt8(truncatingIfNeeded: size >> 24),
        ]
    }
}
