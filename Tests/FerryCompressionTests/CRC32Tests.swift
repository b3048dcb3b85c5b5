@testable import FerryCompression
import Foundation
import Testing

/// The CRC-32 that gzip streams carry: folded by carry-less multiplication where the processor
/// has it, by zlib for short inputs and the last bytes. Checked against a bit-by-bit reference.
@Suite("CRC-32")
struct CRC32Tests {
    @Test("\"123456789\" has the standard check value; runs of zeros and ones equal the reference")
    func knownValues() {
        let nine = Array("123456789".utf8)
        #expect(nine.withUnsafeBytes { Zlib.crc32(0, $0) } == 0xCBF4_3926)
        let zeros = [UInt8](repeating: 0, count: 64)
        #expect(zeros.withUnsafeBytes { Zlib.crc32(0, $0) } == referenceCRC32(zeros))
        let ones = [UInt8](repeating: 0xFF, count: 4096)
        #expect(ones.withUnsafeBytes { Zlib.crc32(0, $0) } == referenceCRC32(ones))
    }

    @Test("Every length from 0 to 300 at every alignment, continued from another CRC, equals the reference")
    func lengthsAndAlignments() {
        let bytes = TestData.random(count: 400, seed: 11)
        var generator = SeededGenerator(seed: 12)
        bytes.withUnsafeBytes { all in
            for offset in 0..<16 {
                for length in 0...300 {
                    let start = UInt32.random(in: 0...UInt32.max, using: &generator)
                    let piece = UnsafeRawBufferPointer(rebasing: all[offset..<offset + length])
                    let expected = referenceCRC32(piece, start)
                    let folded = Zlib.crc32(start, piece)
                    let zlib = Zlib.zlibCRC32(start, piece)
                    if folded != expected || zlib != expected {
                        Issue.record("offset \(offset), length \(length): \(folded) and zlib \(zlib), expected \(expected)")
                        return
                    }
                }
            }
        }
    }

    @Test("A megabyte in pieces cut anywhere gives the CRC of the whole")
    func pieces() {
        let bytes = TestData.random(count: (1 << 20) + 7, seed: 13)
        let whole = referenceCRC32(bytes)
        #expect(bytes.withUnsafeBytes { Zlib.zlibCRC32(0, $0) } == whole)
        var generator = SeededGenerator(seed: 14)
        for _ in 0..<20 {
            var crc: UInt32 = 0
            var start = 0
            bytes.withUnsafeBytes { all in
                while start < all.count {
                    let end = min(all.count, start + Int.random(in: 0...70_000, using: &generator))
                    crc = Zlib.crc32(crc, UnsafeRawBufferPointer(rebasing: all[start..<end]))
                    start = end
                }
            }
            #expect(crc == whole)
        }
    }

    #if os(Linux) && arch(x86_64)
    @Test("Folding is used exactly when /proc/cpuinfo lists pclmulqdq and sse4_1")
    func foldingWhereSupported() throws {
        let cpuinfo = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
        let flags = cpuinfo.split(separator: "\n").first { $0.hasPrefix("flags") }.map { $0.split(separator: " ").map(String.init) } ?? []
        #expect(Zlib.foldsCRC == (flags.contains("pclmulqdq") && flags.contains("sse4_1")))
    }
    #endif
}
