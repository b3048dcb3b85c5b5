import CFerrySystem

/// Ferry's one JSON compaction: the whitespace between tokens removed, strings copied as they
/// are — for keeping records of pretty-printed responses as compact JSON (replay's record
/// blobs), and for writing rejected pretty-printed entries as one line.
///
/// Sixty-four bytes at a time (`CFerrySystem_compactJSON`): bit masks of quotes, backslashes and
/// whitespace; the bytes inside strings from the unescaped quotes; every byte kept but whitespace
/// outside strings — packed with AVX-512 VBMI2's byte compress where the processor has it and the
/// system has enabled its registers (Linux; macOS enables them lazily), with SSSE3 byte shuffles
/// otherwise on x86-64 (see ``Implementation``).
package enum JSONCompaction {
    /// Copies `text` — valid JSON, or at least JSON whose strings are closed — compacted to
    /// `out`, which has room for `text.count` bytes; returns the bytes written.
    package static func compact(_ text: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer) -> Int {
        guard let base = text.baseAddress, text.count > 0 else { return 0 }
        return CFerrySystem_compactJSON(base.assumingMemoryBound(to: UInt8.self), text.count,
                                        out.assumingMemoryBound(to: UInt8.self))
    }

    /// A compacted copy of `text`, by `implementation` (the fastest this processor has when `nil`).
    package static func compacted(_ text: UnsafeRawBufferPointer, by implementation: Implementation? = nil) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: text.count) { buffer, count in
            guard let implementation else {
                count = compact(text, into: UnsafeMutableRawPointer(buffer.baseAddress!))
                return
            }
            precondition(implementation.isAvailable, "\(implementation) compaction does not run on this processor")
            guard let base = text.baseAddress, text.count > 0 else {
                count = 0
                return
            }
            count = CFerrySystem_compactJSONWith(implementation.rawValue, base.assumingMemoryBound(to: UInt8.self), text.count,
                                                 buffer.baseAddress!)
        }
    }

    /// The implementations of compaction: ``compact(_:into:)`` uses the fastest
    /// ``isAvailable`` one; tests run each.
    package enum Implementation: Int32, CaseIterable, Sendable, CustomStringConvertible {
        /// Sixteen-byte compares, kept bytes copied one by one.
        case portable = 0
        /// Kept bytes moved eight at a time with SSSE3's byte shuffle (x86-64).
        case ssse3 = 1
        /// Sixty-four-byte compares and AVX-512 VBMI2's byte compress (x86-64).
        case avx512 = 2

        /// Whether this processor runs it.
        package var isAvailable: Bool { CFerrySystem_hasCompaction(rawValue) != 0 }

        package var description: String {
            switch self {
            case .portable: "portable"
            case .ssse3: "SSSE3"
            case .avx512: "AVX-512"
            }
        }
    }
}
