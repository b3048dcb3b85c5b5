import FerryIO

/// Writes a POSIX tar stream (ustar headers, pax `x` headers for names over 100 bytes or sizes
/// over 8 GiB) into a sink, one regular file at a time, then the two end-of-archive blocks.
final class TarWriter {
    private let sink: any ByteSink
    private let modificationTime: Int64
    /// Bytes written so far.
    private(set) var offset = 0

    /// Creates a writer; every member gets `modificationTime` (seconds since 1970).
    init(sink: any ByteSink, modificationTime: Int64) {
        self.sink = sink
        self.modificationTime = modificationTime
    }

    /// Writes a member's header(s). The caller then writes exactly `size` bytes with
    /// ``writeData(_:)`` and calls ``endMember(size:)``.
    func beginMember(name: String, size: Int) throws {
        var pax: [UInt8] = []
        let nameBytes = Array(name.utf8)
        let isASCII = !nameBytes.contains { $0 >= 0x80 }
        if nameBytes.count > 100 || !isASCII {
            pax += TarHeader.paxRecord(key: "path", value: name)
        }
        if size > TarHeader.maximumOctalSize {
            pax += TarHeader.paxRecord(key: "size", value: String(size))
        }
        let shortName = String(decoding: nameBytes.prefix(100).filter { $0 < 0x80 }, as: UTF8.self)
        if !pax.isEmpty {
            let paxName = String(decoding: (Array("PaxHeaders/".utf8) + Array(shortName.utf8)).prefix(100), as: UTF8.self)
            try write(TarHeader.encode(name: paxName, size: pax.count, modificationTime: modificationTime,
                                       typeFlag: TarHeader.TypeFlag.paxExtended))
            try write(pax)
            try pad(pax.count)
        }
        try write(TarHeader.encode(name: shortName, size: size, modificationTime: modificationTime,
                                   typeFlag: TarHeader.TypeFlag.regular))
    }

    /// Writes member data.
    func writeData(_ bytes: UnsafeRawBufferPointer) throws {
        try sink.write(bytes)
        offset += bytes.count
    }

    /// Pads the member that had `size` bytes to a whole block.
    func endMember(size: Int) throws {
        try pad(size)
    }

    /// Writes a whole member from memory.
    func addMember(name: String, bytes: [UInt8]) throws {
        try beginMember(name: name, size: bytes.count)
        try bytes.withUnsafeBytes { try writeData($0) }
        try endMember(size: bytes.count)
    }

    /// Writes the two zero blocks that end the archive.
    func finish() throws {
        try write([UInt8](repeating: 0, count: 2 * TarHeader.blockSize))
    }

    private func write(_ bytes: [UInt8]) throws {
        try sink.write(bytes)
        offset += bytes.count
    }

    private func pad(_ size: Int) throws {
        let remainder = size % TarHeader.blockSize
        if remainder != 0 { try write([UInt8](repeating: 0, count: TarHeader.blockSize - remainder)) }
    }
}
