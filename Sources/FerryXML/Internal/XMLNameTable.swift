#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Maps names as libxml2 hands them out (pointers into the reader's dictionary) to ``XMLName``
/// with one or two probes of a small hash table; names that are not interned fall back to a
/// string comparison.
struct XMLNameTable {
    private var keys: [UnsafePointer<UInt8>?]
    private var values: [XMLName]
    private static let mask = 255
    private let strings: [[UInt8]]
    /// The interned `escaped`, checked on every element.
    let escaped: UnsafePointer<UInt8>?

    /// Builds the table from the reader's interned copies of every name.
    init(intern: (String) -> UnsafePointer<UInt8>?) {
        keys = Array(repeating: nil, count: Self.mask + 1)
        values = Array(repeating: .records, count: Self.mask + 1)
        strings = XMLName.allCases.map { Array($0.text.utf8) }
        for name in XMLName.allCases {
            guard let pointer = intern(name.text) else { continue }
            var i = Self.slot(pointer)
            while keys[i] != nil { i = (i + 1) & Self.mask }
            keys[i] = pointer
            values[i] = name
        }
        escaped = intern(XMLName.escaped.text)
    }

    @inline(__always)
    private static func slot(_ pointer: UnsafePointer<UInt8>) -> Int {
        let bits = UInt(bitPattern: pointer)
        return Int(truncatingIfNeeded: (bits >> 3) ^ (bits >> 11)) & mask
    }

    /// The name `pointer` spells, or `nil` for a name the format does not have.
    @inline(__always)
    func lookup(_ pointer: UnsafePointer<UInt8>?) -> XMLName? {
        guard let pointer else { return nil }
        var i = Self.slot(pointer)
        while let candidate = keys[i] {
            if candidate == pointer { return values[i] }
            i = (i + 1) & Self.mask
        }
        return slowLookup(pointer)
    }

    /// Names that are not interned (never the case for names libxml2 parsed) compare as strings.
    private func slowLookup(_ pointer: UnsafePointer<UInt8>) -> XMLName? {
        let length = strlen(pointer)
        for (index, bytes) in strings.enumerated() where bytes.count == length {
            if bytes.withUnsafeBufferPointer({ memcmp($0.baseAddress!, pointer, length) == 0 }) {
                return XMLName.allCases[index]
            }
        }
        return nil
    }
}
