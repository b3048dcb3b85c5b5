#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A record name or zone name compared and hashed by its UTF-8 bytes.
///
/// CloudKit names are byte strings: `"é"` and `"e\u{301}"` name two records. Swift's `String`
/// equality is canonical equivalence, which would merge them, so replay keys never use it.
package struct ExactName: Hashable, Comparable {
    package let string: String

    @inlinable
    package init(_ string: String) { self.string = string }

    @inlinable
    package static func == (a: ExactName, b: ExactName) -> Bool {
        a.withBytes { x in b.withBytes { y in x.count == y.count && (x.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0) } }
    }

    /// Byte order (the order of Unicode scalar values), the same on every platform.
    @inlinable
    package static func < (a: ExactName, b: ExactName) -> Bool {
        a.withBytes { x in
            b.withBytes { y in
                let n = min(x.count, y.count)
                let c = n == 0 ? 0 : memcmp(x.baseAddress!, y.baseAddress!, n)
                return c != 0 ? c < 0 : x.count < y.count
            }
        }
    }

    /// Whether two strings have the same UTF-8 bytes.
    @inlinable @inline(__always)
    package static func same(_ a: String, _ b: String) -> Bool {
        ExactName(a) == ExactName(b)
    }

    @inlinable
    package func hash(into hasher: inout Hasher) {
        withBytes { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    @inlinable @inline(__always)
    package func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = string.utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(string.utf8).withUnsafeBufferPointer(body)
    }
}
