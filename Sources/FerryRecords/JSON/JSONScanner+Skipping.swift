#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The keys of the objects a scanner is inside, kept so duplicate keys are found without
/// allocating per object. Reuse one across values; it only grows to the widest nesting seen.
///
/// Copies share their storage (it is raw memory, for speed): give a copy that another thread
/// uses storage of its own with ``separate()``.
package struct JSONKeyScratch {
    @usableFromInline struct Span {
        @usableFromInline var start: Int
        @usableFromInline var end: Int
        @usableFromInline var isEscaped: Bool
        /// A one-word filter of the keys of this span's object up to this one: a bit per key
        /// (``JSONScanner/keyBit(_:)``), and ``JSONScanner/escapedKeyBit`` once a key had escapes.
        /// A key whose bit is not set yet is new without comparing it with the others.
        @usableFromInline var seen: UInt64 = 0

        @inlinable init(start: Int, end: Int, isEscaped: Bool) {
            self.start = start
            self.end = end
            self.isEscaped = isEscaped
        }
    }

    /// The spans, in raw memory owned by one object. Unchecked exclusivity: the properties are
    /// touched for every key, only by the thread the scratch belongs to, never while another
    /// access is under way.
    @usableFromInline final class Storage {
        @exclusivity(unchecked) @usableFromInline var spans: UnsafeMutablePointer<Span>
        @exclusivity(unchecked) @usableFromInline var capacity: Int

        @usableFromInline init(capacity: Int) {
            self.capacity = capacity
            spans = .allocate(capacity: capacity)
        }

        @usableFromInline func grow() {
            let bigger = UnsafeMutablePointer<Span>.allocate(capacity: capacity * 2)
            bigger.moveInitialize(from: spans, count: capacity)
            spans.deallocate()
            spans = bigger
            capacity *= 2
        }

        deinit { spans.deallocate() }
    }

    /// A stack: the live spans are the first `top`.
    @usableFromInline var storage = Storage(capacity: 64)
    @usableFromInline var top = 0

    /// An empty scratch.
    package init() {}

    /// Gives this copy storage of its own (before another thread uses it).
    package mutating func separate() {
        storage = Storage(capacity: storage.capacity)
        top = 0
    }

    /// Where the keys of an object entered now will start; pass it to
    /// ``JSONScanner/readKey(recordingIn:from:)`` and to ``forget(from:)``.
    @inlinable package var mark: Int { top }

    /// Drops the keys recorded from `mark` on (when the object they belong to ends).
    @inlinable package mutating func forget(from mark: Int) { top = mark }

    @inlinable @inline(__always) mutating func push(_ span: Span) {
        if top == storage.capacity { storage.grow() }
        (storage.spans + top).initialize(to: span)
        top += 1
    }

    /// The span at `index` (below `top`).
    @inlinable @inline(__always) func span(at index: Int) -> Span { storage.spans[index] }
}

extension JSONScanner {
    /// Skips any JSON value, validating it exactly as ``skipValue()`` does — strings end, escapes
    /// and UTF-8 are valid, numbers and literals are well formed, brackets balance, no object has
    /// a key twice — but without allocating: the keys of open objects are kept in `scratch`.
    ///
    /// For scanners that skip most of a large input (replaying histories, indexing).
    @inlinable
    package mutating func skipValue(scratch: inout JSONKeyScratch) throws(RecordFormatError) {
        skipWhitespace()
        switch current {
        case UInt8(ascii: "\""):
            let start = position
            let (stop, flags) = try scanStringBody()
            try validateString(from: start + 1, to: stop, flags: flags)
        case UInt8(ascii: "{"):
            try beginObject()
            let frame = scratch.mark
            defer { scratch.forget(from: frame) }
            var first = true
            while try nextMember(&first) {
                _ = try readKey(recordingIn: &scratch, from: frame)
                try skipValue(scratch: &scratch)
            }
        case UInt8(ascii: "["):
            try beginArray()
            var first = true
            while try nextElement(&first) { try skipValue(scratch: &scratch) }
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            _ = try readNumber()
        default:
            if matchLiteral("true") || matchLiteral("false") || matchLiteral("null") { return }
            throw unexpected("a value")
        }
    }

    /// Checks the escapes and UTF-8 of the string content `start..<stop` that ``scanStringBody()``
    /// flagged.
    @inlinable @inline(__always)
    mutating func validateString(from start: Int, to stop: Int, flags: UInt64) throws(RecordFormatError) {
        if flags & Self.escapeFlag != 0 {
            try checkEscapedString(from: start, to: stop)
        } else if flags & Self.highFlag != 0 {
            try validateUTF8(from: start, to: stop)
        }
    }

    @inlinable @inline(__always)
    func sameKey(_ a: JSONKeyScratch.Span, _ b: JSONKeyScratch.Span) throws(RecordFormatError) -> Bool {
        if !a.isEscaped && !b.isEscaped {
            let n = a.end - a.start
            guard n == b.end - b.start else { return false }
            if n <= 8 {
                // Short keys, the common case: one masked word each (the closing quote and what
                // follows may be read past the key, never past the text's end).
                guard n > 0 else { return true }
                if b.end + 8 <= end && a.end + 8 <= end {
                    let mask: UInt64 = n == 8 ? ~0 : (1 << (8 * UInt64(n))) &- 1
                    let x = UnsafeRawPointer(base + a.start).loadUnaligned(as: UInt64.self)
                    let y = UnsafeRawPointer(base + b.start).loadUnaligned(as: UInt64.self)
                    return (x ^ y) & mask == 0
                }
            }
            return memcmp(base + a.start, base + b.start, n) == 0
        }
        return Array(try keyString(a).utf8) == Array(try keyString(b).utf8)
    }

    /// The filter bit of a key without escapes, one of 63, from its length and three of its bytes
    /// (equal keys always get the same bit).
    @inlinable @inline(__always)
    func keyBit(_ span: JSONKeyScratch.Span) -> UInt64 {
        let n = span.end - span.start
        guard n > 0 else { return 1 }
        // The length, the first byte and the last two (`recordName` and `recordType` differ only
        // there), one multiply, the top six bits (63 folded onto 62). The multiplier was picked
        // so that the members of each of CloudKit's objects (record, field, stamp, zone ID,
        // reference, asset, location, change response) get bits of their own.
        let packed = UInt64(truncatingIfNeeded: n) | UInt64(base[span.start]) << 8
            | UInt64(base[span.end - min(n, 2)]) << 16 | UInt64(base[span.end - 1]) << 24
        return 1 << min((packed &* 0x9531_985D_5D9D_C9F9) >> 58, 62)
    }

    /// The filter bit that says an object had a key with escapes (whose bytes are not its value):
    /// every later key of it is compared with the others.
    @usableFromInline static var escapedKeyBit: UInt64 { 1 << 63 }

    /// Fails when the object whose keys are those of `scratch` from `mark` on already had `span`.
    /// (The error is made out of line, so that the loop inlines into every key read.)
    @inlinable @inline(__always)
    func checkUnique(_ span: JSONKeyScratch.Span, in scratch: JSONKeyScratch, from mark: Int, at keyStart: Int) throws(RecordFormatError) {
        var index = mark
        while index < scratch.top {
            if try sameKey(scratch.span(at: index), span) { throw duplicateKeyError(span, at: keyStart) }
            index += 1
        }
    }

    @usableFromInline @inline(never)
    func duplicateKeyError(_ span: JSONKeyScratch.Span, at keyStart: Int) -> RecordFormatError {
        let key = (try? keyString(span)) ?? ""
        return error(.duplicateKey, "expected each key once, found \"\(key)\" twice", at: keyStart)
    }

    @usableFromInline
    func keyString(_ span: JSONKeyScratch.Span) throws(RecordFormatError) -> String {
        if span.isEscaped { return try unescape(from: span.start, to: span.end) }
        return String(decoding: UnsafeBufferPointer(start: base + span.start, count: span.end - span.start), as: UTF8.self)
    }

    /// Reads a member key and the `:` after it, like ``readKey()``, and fails when the object
    /// already had that key: the keys of the current object are those in `scratch` from `mark`
    /// (``JSONKeyScratch/mark`` taken when the object was entered) on. Returns where the key lies
    /// (compare it with ``equals(_:_:)``).
    @inlinable @inline(__always)
    package mutating func readKey(recordingIn scratch: inout JSONKeyScratch, from mark: Int) throws(RecordFormatError) -> JSONStringToken {
        skipWhitespace()
        guard current == UInt8(ascii: "\"") else { throw unexpected("a key string") }
        let keyStart = position
        let (stop, flags) = try scanStringBody()
        try validateString(from: keyStart + 1, to: stop, flags: flags)
        var span = JSONKeyScratch.Span(start: keyStart + 1, end: stop, isEscaped: flags & Self.escapeFlag != 0)
        let bit = span.isEscaped ? Self.escapedKeyBit : keyBit(span)
        // The first key of an object has nothing to differ from; a later one is compared with
        // the others only when it has escapes, or the filter of the keys before it has its bit
        // or saw escapes.
        if mark < scratch.top {
            let before = scratch.span(at: scratch.top - 1).seen
            if span.isEscaped || before & (bit | Self.escapedKeyBit) != 0 { try checkUnique(span, in: scratch, from: mark, at: keyStart) }
            span.seen = before | bit
        } else {
            span.seen = bit
        }
        scratch.push(span)
        if current == UInt8(ascii: ":") {
            position += 1
            return JSONStringToken(start: span.start, end: span.end, isEscaped: span.isEscaped)
        }
        skipWhitespace()
        guard current == UInt8(ascii: ":") else { throw unexpected("':' after key \"\(try keyString(span))\"") }
        position += 1
        return JSONStringToken(start: span.start, end: span.end, isEscaped: span.isEscaped)
    }

    /// Reads a string (validated) and returns where its content lies, without making a `String`.
    @inlinable
    package mutating func readStringToken() throws(RecordFormatError) -> JSONStringToken {
        skipWhitespace()
        guard current == UInt8(ascii: "\"") else { throw unexpected("a string") }
        let start = position
        let (stop, flags) = try scanStringBody()
        try validateString(from: start + 1, to: stop, flags: flags)
        return JSONStringToken(start: start + 1, end: stop, isEscaped: flags & Self.escapeFlag != 0)
    }

    /// The value of a string token read by ``readStringToken()``.
    package func string(_ token: JSONStringToken) throws(RecordFormatError) -> String {
        if token.isEscaped { return try unescape(from: token.start, to: token.end) }
        return String(decoding: UnsafeBufferPointer(start: base + token.start, count: token.end - token.start), as: UTF8.self)
    }

    /// Whether a string token read by ``readStringToken()`` has the value `literal`.
    @inlinable @inline(__always)
    package func equals(_ token: JSONStringToken, _ literal: StaticString) -> Bool {
        let n = literal.utf8CodeUnitCount
        if token.isEscaped {
            guard let value = try? string(token) else { return false }
            return value.utf8.elementsEqual(UnsafeBufferPointer(start: literal.utf8Start, count: n))
        }
        return token.end - token.start == n && memcmp(base + token.start, literal.utf8Start, n) == 0
    }
}

/// Where a string's content lies in the scanned text (between its quotes) and whether it holds
/// escapes (then its value differs from its bytes).
package struct JSONStringToken {
    /// Offset of the first content byte.
    package var start: Int
    /// Offset of the closing quote.
    package var end: Int
    /// Whether the content holds escapes.
    package var isEscaped: Bool

    @inlinable
    package init(start: Int, end: Int, isEscaped: Bool) {
        self.start = start
        self.end = end
        self.isEscaped = isEscaped
    }
}
