#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A name — of a record, zone, record type or field — compared and hashed by its UTF-8 bytes.
///
/// CloudKit names are byte strings: `"é"` and `"e\u{301}"` name two records, two record types or
/// two fields. Swift's `String` equality is canonical equivalence, which would merge them, so
/// dictionaries keyed by names (replay's keys, an archive manifest's counts and schema) key them
/// with `ExactName`. It orders by bytes, the same on every platform.
public struct ExactName: Hashable, Comparable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The name.
    public let string: String

    /// The name `string`, compared by its bytes.
    @inlinable
    public init(_ string: String) { self.string = string }

    /// The name `value`.
    @inlinable
    public init(stringLiteral value: String) { self.string = value }

    /// The name itself.
    public var description: String { string }

    @inlinable
    public static func == (a: ExactName, b: ExactName) -> Bool {
        a.withBytes { x in b.withBytes { y in x.count == y.count && (x.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0) } }
    }

    /// Byte order (the order of Unicode scalar values), the same on every platform.
    @inlinable
    public static func < (a: ExactName, b: ExactName) -> Bool {
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
    public func hash(into hasher: inout Hasher) {
        withBytes { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    @inlinable @inline(__always)
    package func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = string.utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(string.utf8).withUnsafeBufferPointer(body)
    }
}
