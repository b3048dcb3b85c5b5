import FerryInternals
import FerryRecords

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Byte strings a record's JSON must contain for a predicate to hold, found without decoding.
///
/// Derived from the comparisons of a predicate's top-level conjunction that compare a field (or
/// `recordType`, `recordName`, `recordChangeTag`) with a string constant: `==` needs the
/// quoted constant, `BEGINSWITH` the opening quote and the constant, `ENDSWITH` the constant and
/// the closing quote, `CONTAINS` the constant. With `[c]` the search ignores ASCII case, and a
/// line holding any character whose case folding yields ASCII letters (ß, ﬁ, the Kelvin sign…)
/// always passes. Only constants of printable ASCII other than `"`, `\` and `/` are used (JSON
/// may spell those differently); other comparisons, `OR`, `NOT`, `[d]` and `[n]` add nothing.
///
/// It is a necessary condition only: a line that passes may still not match. Callers must only
/// apply it to lines without `\u` escapes, which could spell a literal in other bytes.
public struct LiteralPrefilter: Sendable, Equatable {
    // `Sendable`: `needles` is immutable once made.
    /// One required byte string.
    public struct Literal: Sendable, Equatable {
        /// The bytes (lower-cased when `ignoresCase`).
        public var bytes: [UInt8]
        /// Whether ASCII letters match in either case.
        public var ignoresCase: Bool
        /// With `ignoresCase`: the UTF-8 of the characters whose case folding yields a letter of
        /// the literal (ß for "s", ﬂ for "l"…). A line holding one may match in folded form.
        public var foldingSequences: [[UInt8]] = []
    }

    /// Every literal must be found.
    public let literals: [Literal]
    /// The literals' bytes where ``mightMatch(_:)`` reads them without retaining anything: every
    /// thread that filters would retain the same arrays, and those atomics contend.
    private let needles: Needles

    public static func == (a: Self, b: Self) -> Bool { a.literals == b.literals }

    /// The literals `predicate` requires, or `nil` when it requires none.
    public init?(_ predicate: RecordPredicate) {
        var literals: [Literal] = []
        Self.collect(predicate, into: &literals)
        // Longer literals are rarer: test them first.
        literals.sort { $0.bytes.count > $1.bytes.count }
        guard !literals.isEmpty else { return nil }
        self.literals = literals
        needles = Needles(literals)
    }

    private static func collect(_ predicate: RecordPredicate, into literals: inout [Literal]) {
        switch predicate {
        case .and(let operands, _):
            for operand in operands { collect(operand, into: &literals) }
        case .comparison(let comparison):
            if let literal = literal(for: comparison) { literals.append(literal) }
        case .constant, .or, .not:
            break
        }
    }

    private static func literal(for comparison: PredicateComparison) -> Literal? {
        guard comparison.quantifier == .direct, case .keyPath(let path) = comparison.left, path.count == 1,
              case .string(let constant) = comparison.right else { return nil }
        let key = path[0]
        guard !key.hasPrefix("@") else { return nil }
        switch RecordKey(key) {
        case .field, .recordType, .recordName, .recordChangeTag: break
        default: return nil
        }
        let options = comparison.options
        guard options.isSubset(of: [.caseInsensitive]) else { return nil }
        let text = Array(constant.utf8)
        guard !text.isEmpty, text.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C && $0 != 0x2F }) else {
            return nil
        }
        let quote = UInt8(ascii: "\"")
        var bytes: [UInt8]
        switch comparison.operator {
        case .equalTo: bytes = [quote] + text + [quote]
        case .beginsWith: bytes = [quote] + text
        case .endsWith: bytes = text + [quote]
        case .contains: bytes = text
        default: return nil
        }
        let ignoresCase = options.contains(.caseInsensitive)
        guard ignoresCase else { return Literal(bytes: bytes, ignoresCase: false) }
        bytes = bytes.map(Self.lower)
        let letters = Set(bytes.filter { $0 >= 0x61 && $0 <= 0x7A })
        let folding = Self.foldingIntoASCII.filter { !$0.letters.isDisjoint(with: letters) }.map(\.utf8)
        return Literal(bytes: bytes, ignoresCase: true, foldingSequences: folding)
    }

    /// The characters whose case folding yields ASCII letters, with those letters.
    private static let foldingIntoASCII: [(utf8: [UInt8], letters: Set<UInt8>)] =
        [0xDF, 0x130, 0x131, 0x149, 0x17F, 0x1F0, 0x1E96, 0x1E97, 0x1E98, 0x1E99, 0x1E9A, 0x212A,
         0xFB00, 0xFB01, 0xFB02, 0xFB03, 0xFB04, 0xFB05, 0xFB06].map { value in
            let text = String(Character(Unicode.Scalar(UInt32(value))!))
            let folded = StringMatching.fold(text, [.caseInsensitive])
            return (Array(text.utf8), Set(folded.utf8.filter { $0 >= 0x61 && $0 <= 0x7A }))
        }

    @inline(__always)
    static func lower(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }

    /// Whether `line` holds every literal (`false` means the predicate cannot hold for it).
    public func mightMatch(_ line: UnsafeRawBufferPointer) -> Bool {
        for needle in needles.entries {
            if needle.ignoresCase {
                if Self.containsIgnoringCase(line, needle.bytes) { continue }
                for sequence in needle.folding where ByteSearch.contains(line, sequence) { return true }
                return false
            } else if !ByteSearch.contains(line, needle.bytes) {
                return false
            }
        }
        return true
    }

    /// ASCII case-insensitive search for a lower-cased needle: candidates for its first byte are
    /// found with `memchr` (for a letter, its lower- and upper-case forms in turn).
    static func containsIgnoringCase(_ line: UnsafeRawBufferPointer, _ needle: UnsafeRawBufferPointer) -> Bool {
        let n = line.count, m = needle.count
        guard m > 0 else { return true }
        guard n >= m, let base = line.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return false }
        let needlePointer = needle.assumingMemoryBound(to: UInt8.self)
        let first = needlePointer[0]
        let upper = first >= 0x61 && first <= 0x7A ? first - 0x20 : first
        let limit = n - m // last start position
        var lowerNext = find(first, in: base, from: 0, through: limit)
        var upperNext = upper == first ? nil : find(upper, in: base, from: 0, through: limit)
        while true {
            let candidate: Int
            switch (lowerNext, upperNext) {
            case (nil, nil): return false
            case (let a?, nil): candidate = a; lowerNext = find(first, in: base, from: a + 1, through: limit)
            case (nil, let b?): candidate = b; upperNext = find(upper, in: base, from: b + 1, through: limit)
            case (let a?, let b?):
                if a < b {
                    candidate = a
                    lowerNext = find(first, in: base, from: a + 1, through: limit)
                } else {
                    candidate = b
                    upperNext = find(upper, in: base, from: b + 1, through: limit)
                }
            }
            if matches(base + candidate, needlePointer) { return true }
        }
    }

    /// The first position in `from...through` holding `byte`.
    @inline(__always)
    private static func find(_ byte: UInt8, in base: UnsafePointer<UInt8>, from: Int, through: Int) -> Int? {
        guard from <= through, let hit = memchr(base + from, Int32(byte), through - from + 1) else { return nil }
        return UnsafeRawPointer(hit) - UnsafeRawPointer(base)
    }

    @inline(__always)
    private static func matches(_ text: UnsafePointer<UInt8>, _ needle: UnsafeBufferPointer<UInt8>) -> Bool {
        for j in 1..<max(needle.count, 1) where lower(text[j]) != needle[j] { return false }
        return true
    }
}

/// The bytes of a prefilter's literals in memory of their own, as plain pointers: reading them
/// takes no reference count. Made once, never changed, freed with the last prefilter that holds
/// them.
private final class NeedleStorage: Sendable {
    // `Sendable`: `memory` is written only by `init`.
    nonisolated(unsafe) let memory: UnsafeMutableRawBufferPointer

    init(byteCount: Int, alignment: Int) {
        memory = .allocate(byteCount: max(byteCount, 1), alignment: alignment)
    }

    deinit { memory.deallocate() }
}

/// The literals of a ``LiteralPrefilter`` as ``NeedleStorage`` holds them.
private struct Needles: @unchecked Sendable {
    // `@unchecked Sendable`: the pointers are into `storage`, immutable and kept alive by it.
    struct Entry {
        var bytes: UnsafeRawBufferPointer
        var ignoresCase: Bool
        var folding: UnsafeBufferPointer<UnsafeRawBufferPointer>
    }

    let entries: UnsafeBufferPointer<Entry>
    private let storage: NeedleStorage

    init(_ literals: [LiteralPrefilter.Literal]) {
        // Entries first, then the folding sequences' pointers, then every byte.
        let sequences = literals.reduce(0) { $0 + $1.foldingSequences.count }
        let bytes = literals.reduce(0) { $0 + $1.bytes.count + $1.foldingSequences.reduce(0) { $0 + $1.count } }
        let entryBytes = literals.count * MemoryLayout<Entry>.stride
        let sequenceBytes = sequences * MemoryLayout<UnsafeRawBufferPointer>.stride
        storage = NeedleStorage(byteCount: entryBytes + sequenceBytes + bytes,
                                alignment: max(MemoryLayout<Entry>.alignment, MemoryLayout<UnsafeRawBufferPointer>.alignment))
        let base = storage.memory.baseAddress!
        let entryPointer = base.bindMemory(to: Entry.self, capacity: literals.count)
        let sequencePointer = (base + entryBytes).bindMemory(to: UnsafeRawBufferPointer.self, capacity: sequences)
        // The literals' bytes are read as `UInt8` (`assumingMemoryBound`): bound so here.
        var byteAt = UnsafeMutableRawPointer((base + entryBytes + sequenceBytes).bindMemory(to: UInt8.self, capacity: bytes))
        var sequenceAt = 0
        func place(_ source: [UInt8]) -> UnsafeRawBufferPointer {
            source.withUnsafeBytes { byteAt.copyMemory(from: $0.baseAddress ?? UnsafeRawPointer(byteAt), byteCount: $0.count) }
            defer { byteAt += source.count }
            return UnsafeRawBufferPointer(start: byteAt, count: source.count)
        }
        for (index, literal) in literals.enumerated() {
            let first = sequenceAt
            for sequence in literal.foldingSequences {
                (sequencePointer + sequenceAt).initialize(to: place(sequence))
                sequenceAt += 1
            }
            (entryPointer + index).initialize(to: Entry(
                bytes: place(literal.bytes), ignoresCase: literal.ignoresCase,
                folding: UnsafeBufferPointer(start: sequencePointer + first, count: sequenceAt - first)))
        }
        entries = UnsafeBufferPointer(start: entryPointer, count: literals.count)
    }
}
