#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Follows the tag structure of the input as it is read, so that errors can name an exact line and
/// column and rejected records can be copied verbatim.
///
/// libxml2 keeps a node's line in 16 bits, so past line 65,535 its lines are guesses, and it keeps
/// no columns at all. The scanner sees every byte libxml2 is given (in the read callback, before
/// libxml2 does) and records a ``XMLMark`` for each element start at the depths it watches: depth 1
/// (the records) for the reader, every depth for the validator. It understands exactly as much XML
/// as it needs — tags, quoted attribute values, comments, CDATA sections, processing
/// instructions — and leaves judging well-formedness to libxml2: on malformed input its marks
/// may be wrong, but libxml2 then reports the error with its own position.
///
/// Its state is a few integers, so any chunk boundary (down to one byte) gives the same marks.
struct XMLStructureScanner {
    enum State: UInt8 {
        case text, lessThan, tagName, tag, doubleQuoted, singleQuoted, endTag, bang, comment, commentDash1,
             commentDash2, cdata, cdataBracket1, cdataBracket2, instruction, instructionQuestion, declaration
    }

    /// Record marks for elements at depth 1 only (`false`: at every depth).
    let recordsOnly: Bool
    /// Deepest element level accepted (the root is level 0).
    let maximumDepth: Int
    /// Most attributes accepted on one start tag.
    let maximumAttributes: Int
    /// Longest run of text between tags, attribute value, comment, CDATA section or processing
    /// instruction accepted, in bytes.
    let maximumTextBytes: Int
    /// Bytes in the current run of text, value, comment, CDATA section or instruction.
    private var runLength = 0
    /// The first limit the input broke, with where: set once, then the input must stop.
    private(set) var violation: XMLFormatError?
    /// Attributes seen in the current start tag.
    private var attributeCount = 0
    /// Offset and line of the `<` of the current tag.
    private var tagOffset = 0
    private var tagLine = 1

    private(set) var state = State.text
    /// Open elements.
    private(set) var depth = 0
    /// Bytes scanned so far: the offset of the next byte.
    private(set) var offset = 0
    /// The current line (1-based).
    private(set) var line = 1
    /// Offset of the first byte of the current line.
    private(set) var lineStart = 0
    /// Characters between `lineStart` and the start of the current chunk, when the line began in an
    /// earlier chunk.
    private var carriedColumns = 0
    /// Whether the last significant byte in a start tag was `/` (then `>` ends an empty element).
    private var slash = false
    /// Bytes of `<!…` matched so far (`--` or `[CDATA[`).
    private var bangCount = 0
    private var bangIsComment = false
    /// The mark number of the depth-1 element being scanned, or -1.
    private var openRecord = -1
    /// The root element's start tag, once seen.
    private(set) var rootMark: XMLMark?

    /// Marks not yet discarded, numbered from `firstMarkNumber` (the first element is number 1).
    private(set) var marks: [XMLMark] = []
    private(set) var firstMarkNumber = 1

    /// For the validator (every depth): the open elements and the latest closed ones, with their
    /// local names, to place schema violations (see ``lastMark(named:before:)``).
    private var openElements: [(mark: XMLMark, name: [UInt8])] = []
    private var recentElements: [(mark: XMLMark, name: [UInt8])] = []
    private var pendingName: [UInt8] = []
    private static let recentLimit = 4096

    init(recordsOnly: Bool, maximumDepth: Int = .max, maximumAttributes: Int = .max, maximumTextBytes: Int = .max) {
        self.recordsOnly = recordsOnly
        self.maximumDepth = maximumDepth
        self.maximumAttributes = maximumAttributes
        self.maximumTextBytes = maximumTextBytes
        marks.reserveCapacity(64)
    }

    /// The mark with `number` (1-based, in document order), if it was seen and not yet discarded.
    func mark(_ number: Int) -> XMLMark? {
        let index = number - firstMarkNumber
        return index >= 0 && index < marks.count ? marks[index] : nil
    }

    /// Forgets marks numbered below `number`.
    mutating func discardMarks(before number: Int) {
        let drop = min(number - firstMarkNumber, marks.count)
        guard drop > 0 else { return }
        marks.removeFirst(drop)
        firstMarkNumber += drop
    }

    /// The offset of the oldest mark kept, if any.
    var oldestMarkOffset: Int? { marks.first?.offset }

    // MARK: Scanning

    /// Scans the next chunk of input.
    mutating func scan(_ chunk: UnsafeRawBufferPointer) {
        guard let base = chunk.baseAddress?.assumingMemoryBound(to: UInt8.self), chunk.count > 0 else { return }
        let n = chunk.count
        let chunkStart = offset
        var i = 0
        while i < n {
            switch state {
            case .text:
                // Find the next `<`, counting the lines on the way.
                var j = i
                while true {
                    j = Self.find(UInt8(ascii: "<"), 0x0A, in: base, from: j, to: n)
                    guard j < n, base[j] == 0x0A else { break }
                    line += 1
                    lineStart = chunkStart + j + 1
                    j += 1
                }
                lengthen(by: j - i, at: j, base: base, chunkStart: chunkStart)
                if j >= n { i = n; continue }
                tagBegins(at: j, base: base, chunkStart: chunkStart)
                i = j + 1
                state = .lessThan
            case .lessThan:
                let b = base[i]
                switch b {
                case UInt8(ascii: "/"): state = .endTag; i += 1
                case UInt8(ascii: "!"): state = .bang; bangCount = 0; runLength = 0; i += 1
                case UInt8(ascii: "?"): state = .instruction; runLength = 0; i += 1
                default:
                    // A start tag: keep its mark if it is at a watched depth.
                    if depth == 0 && rootMark == nil { rootMark = pendingMark }
                    if depth > maximumDepth && violation == nil {
                        violation = XMLFormatError(.tooDeep, "expected nesting of at most \(maximumDepth) levels (<records> is level 0), found an element at level \(depth)",
                                                   line: tagLine, column: column(ofTagIn: base, chunkStart: chunkStart))
                    }
                    attributeCount = 0
                    slash = false
                    if recordsOnly {
                        if depth == 1 {
                            marks.append(pendingMark)
                            openRecord = firstMarkNumber + marks.count - 1
                        }
                        state = .tag
                    } else {
                        pendingName.removeAll(keepingCapacity: true)
                        state = .tagName
                    }
                }
            case .tagName:
                // The validator keeps each element's local name (after any prefix).
                let b = base[i]
                if b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D || b == UInt8(ascii: "/") || b == UInt8(ascii: ">") {
                    state = .tag
                    continue
                }
                if b == UInt8(ascii: ":") {
                    pendingName.removeAll(keepingCapacity: true)
                } else if pendingName.count < 256 {
                    pendingName.append(b)
                }
                i += 1
            case .tag:
                // Attributes up to `>`, quoted values included, in one go.
                var j = i
                tag: while true {
                    let runStart = j
                    j = Self.findTagStop(in: base, from: j, to: n)
                    // `/` just before `>` (spaces allowed) makes the element empty.
                    var k = j - 1
                    while k >= runStart && (base[k] == 0x20 || base[k] == 0x09 || base[k] == 0x0D) { k -= 1 }
                    if k >= runStart { slash = base[k] == UInt8(ascii: "/") }
                    guard j < n else { i = n; break tag }
                    let b = base[j]
                    switch b {
                    case UInt8(ascii: ">"):
                        if slash {
                            elementEnds(at: chunkStart + j + 1, wasRecord: depth == 1)
                            if !recordsOnly { remember((pendingMark, pendingName)) }
                        } else {
                            depth += 1
                            if !recordsOnly { openElements.append((pendingMark, pendingName)) }
                        }
                        state = .text
                        runLength = 0
                        i = j + 1
                        break tag
                    case UInt8(ascii: "\""), UInt8(ascii: "'"):
                        slash = false
                        attributeCount += 1
                        if attributeCount > maximumAttributes && violation == nil {
                            violation = XMLFormatError(.tooLarge, "expected at most \(maximumAttributes) attributes on one element, found more",
                                                       line: tagLine, column: column(ofTagIn: base, chunkStart: chunkStart))
                        }
                        // The value, to its closing quote.
                        j += 1
                        let valueStart = j
                        runLength = 0
                        j = closingQuote(b, in: base, from: j, to: n, chunkStart: chunkStart)
                        lengthen(by: j - valueStart, at: j, base: base, chunkStart: chunkStart)
                        if j >= n {
                            state = b == UInt8(ascii: "\"") ? .doubleQuoted : .singleQuoted
                            i = n
                            break tag
                        }
                        j += 1
                    default:
                        newline(at: j, chunkStart: chunkStart)
                        j += 1
                    }
                }
            case .doubleQuoted, .singleQuoted:
                // A value that began in an earlier chunk.
                let quote = state == .doubleQuoted ? UInt8(ascii: "\"") : UInt8(ascii: "'")
                let j = closingQuote(quote, in: base, from: i, to: n, chunkStart: chunkStart)
                lengthen(by: j - i, at: j, base: base, chunkStart: chunkStart)
                if j < n {
                    state = .tag
                    i = j + 1
                } else {
                    i = n
                }
            case .endTag:
                let b = base[i]
                if b == UInt8(ascii: ">") {
                    depth -= 1
                    if depth == 1 { elementEnds(at: chunkStart + i + 1, wasRecord: true) }
                    if !recordsOnly, let closed = openElements.popLast() { remember(closed) }
                    state = .text
                    runLength = 0
                } else if b == 0x0A {
                    newline(at: i, chunkStart: chunkStart)
                }
                i += 1
            case .bang:
                let b = base[i]
                if bangCount == 0 {
                    bangIsComment = b == UInt8(ascii: "-")
                    bangCount = 1
                    if !bangIsComment && b != UInt8(ascii: "[") { state = .declaration; continue }
                    i += 1
                } else if bangIsComment {
                    state = b == UInt8(ascii: "-") ? .comment : .declaration
                    if state == .comment { i += 1 }
                } else {
                    // "[CDATA[" after "<!".
                    let expected: StaticString = "[CDATA["
                    if b == expected.utf8Start[bangCount] {
                        bangCount += 1
                        i += 1
                        if bangCount == 7 { state = .cdata }
                    } else {
                        state = .declaration
                    }
                }
            case .comment, .commentDash1, .commentDash2:
                let b = base[i]
                if b == 0x0A { newline(at: i, chunkStart: chunkStart) }
                lengthen(by: 1, at: i, base: base, chunkStart: chunkStart)
                switch (state, b) {
                case (.commentDash2, UInt8(ascii: ">")): state = .text; runLength = 0
                case (.commentDash2, UInt8(ascii: "-")): break
                case (.commentDash1, UInt8(ascii: "-")): state = .commentDash2
                case (_, UInt8(ascii: "-")): state = .commentDash1
                default: state = .comment
                }
                i += 1
            case .cdata, .cdataBracket1, .cdataBracket2:
                let b = base[i]
                if b == 0x0A { newline(at: i, chunkStart: chunkStart) }
                lengthen(by: 1, at: i, base: base, chunkStart: chunkStart)
                switch (state, b) {
                case (.cdataBracket2, UInt8(ascii: ">")): state = .text; runLength = 0
                case (.cdataBracket2, UInt8(ascii: "]")): break
                case (.cdataBracket1, UInt8(ascii: "]")): state = .cdataBracket2
                case (_, UInt8(ascii: "]")): state = .cdataBracket1
                default: state = .cdata
                }
                i += 1
            case .instruction, .instructionQuestion:
                let b = base[i]
                if b == 0x0A { newline(at: i, chunkStart: chunkStart) }
                lengthen(by: 1, at: i, base: base, chunkStart: chunkStart)
                if state == .instructionQuestion && b == UInt8(ascii: ">") {
                    state = .text
                    runLength = 0
                } else {
                    state = b == UInt8(ascii: "?") ? .instructionQuestion : .instruction
                }
                i += 1
            case .declaration:
                // `<!DOCTYPE …>` and other declarations: never accepted (the prolog guard refuses
                // them), so only their end matters, approximately.
                let b = base[i]
                if b == 0x0A { newline(at: i, chunkStart: chunkStart) }
                lengthen(by: 1, at: i, base: base, chunkStart: chunkStart)
                if b == UInt8(ascii: ">") { state = .text; runLength = 0 }
                i += 1
            }
        }
        // Carry the column of the current line into the next chunk.
        if lineStart >= chunkStart {
            carriedColumns = Self.characters(base + (lineStart - chunkStart), n - (lineStart - chunkStart))
        } else {
            carriedColumns += Self.characters(base, n)
        }
        offset = chunkStart + n
    }

    // MARK: Searching, eight bytes at a time

    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080

    /// The high bit of each byte of `word` that equals the byte repeated in `pattern` (exact for the
    /// lowest such byte, which is all the searches use).
    @inline(__always)
    private static func matches(_ word: UInt64, _ pattern: UInt64) -> UInt64 {
        let x = word ^ pattern
        return (x &- ones) & ~x & highs
    }

    /// The index of the first `a` or `b` in `base[from..<to]`, or `to`.
    @inline(__always)
    static func find(_ a: UInt8, _ b: UInt8, in base: UnsafePointer<UInt8>, from: Int, to: Int) -> Int {
        var j = from
        let pa = UInt64(a) &* ones
        let pb = UInt64(b) &* ones
        while j + 8 <= to {
            let word = UnsafeRawPointer(base + j).loadUnaligned(as: UInt64.self)
            let m = matches(word, pa) | matches(word, pb)
            if m != 0 { return j + m.trailingZeroBitCount >> 3 }
            j += 8
        }
        while j < to && base[j] != a && base[j] != b { j += 1 }
        return j
    }

    /// The index of the first byte that ends a run in a start tag (`>`, `"`, `'`, newline), or `to`.
    @inline(__always)
    static func findTagStop(in base: UnsafePointer<UInt8>, from: Int, to: Int) -> Int {
        var j = from
        while j + 8 <= to {
            let word = UnsafeRawPointer(base + j).loadUnaligned(as: UInt64.self)
            let m = matches(word, 0x3E3E_3E3E_3E3E_3E3E) | matches(word, 0x2222_2222_2222_2222)
                | matches(word, 0x2727_2727_2727_2727) | matches(word, 0x0A0A_0A0A_0A0A_0A0A)
            if m != 0 { return j + m.trailingZeroBitCount >> 3 }
            j += 8
        }
        while j < to {
            let b = base[j]
            if b == 0x3E || b == 0x22 || b == 0x27 || b == 0x0A { break }
            j += 1
        }
        return j
    }

    /// The mark of the tag whose `<` was seen last.
    private var pendingMark = XMLMark(offset: 0, line: 0, column: 0)

    @inline(__always)
    private mutating func tagBegins(at index: Int, base: UnsafePointer<UInt8>, chunkStart: Int) {
        tagOffset = chunkStart + index
        tagLine = line
        guard !recordsOnly || depth <= 1 else { return }
        let absolute = chunkStart + index
        let column: Int
        if lineStart >= chunkStart {
            column = 1 + Self.characters(base + (lineStart - chunkStart), absolute - lineStart)
        } else {
            column = 1 + carriedColumns + Self.characters(base, index)
        }
        pendingMark = XMLMark(offset: absolute, line: line, column: column)
    }

    private mutating func remember(_ element: (mark: XMLMark, name: [UInt8])) {
        if recentElements.count >= 2 * Self.recentLimit { recentElements.removeFirst(Self.recentLimit) }
        recentElements.append(element)
    }

    /// The validator's best guess at the element a schema violation is about: the latest element
    /// named `name` whose start tag begins before input offset `offset` (libxml2 reports a
    /// violation while it parses the element's start or end tag, so that element is the latest one
    /// of its name before the parser's position).
    func lastMark(named name: [UInt8]?, before offset: Int) -> XMLMark? {
        var best: XMLMark?
        func consider(_ element: (mark: XMLMark, name: [UInt8])) {
            guard element.mark.offset < offset, name == nil || element.name == name! else { return }
            if best == nil || element.mark.offset > best!.offset { best = element.mark }
        }
        for element in openElements.reversed() { consider(element) }
        for element in recentElements.reversed() { consider(element) }
        return best
    }

    /// Adds `count` bytes to the current run; past ``maximumTextBytes`` the input breaks a limit
    /// (placed at `index`, where the run was when it was measured).
    @inline(__always)
    private mutating func lengthen(by count: Int, at index: Int, base: UnsafePointer<UInt8>, chunkStart: Int) {
        runLength += count
        guard runLength > maximumTextBytes, violation == nil else { return }
        let column = lineStart >= chunkStart
            ? 1 + Self.characters(base + (lineStart - chunkStart), chunkStart + index - lineStart)
            : 1 + carriedColumns + Self.characters(base, index)
        violation = XMLFormatError(.tooLarge, "expected text of at most \(maximumTextBytes) bytes in one piece (text between tags, an attribute value, a comment; maximumTextBytes), found more",
                                   line: line, column: column)
    }

    /// The column of the current tag's `<`, when it is in this chunk on a line counted so far.
    private func column(ofTagIn base: UnsafePointer<UInt8>, chunkStart: Int) -> Int? {
        guard tagOffset >= chunkStart, tagLine == line else { return nil }
        if lineStart >= chunkStart {
            return 1 + Self.characters(base + (lineStart - chunkStart), tagOffset - lineStart)
        }
        return 1 + carriedColumns + Self.characters(base, tagOffset - chunkStart)
    }

    /// Notes the end of an element; only the ends of depth-1 elements are kept.
    @inline(__always)
    private mutating func elementEnds(at end: Int, wasRecord: Bool) {
        guard wasRecord, openRecord >= firstMarkNumber, openRecord - firstMarkNumber < marks.count else { return }
        marks[openRecord - firstMarkNumber].end = end
        openRecord = -1
    }

    @inline(__always)
    private mutating func newline(at index: Int, chunkStart: Int) {
        line += 1
        lineStart = chunkStart + index + 1
    }

    /// The offset of the first `quote` in `base[from..<to]` (`to` when there is none), counting the
    /// newlines before it.
    @inline(__always)
    private mutating func closingQuote(_ quote: UInt8, in base: UnsafePointer<UInt8>, from: Int, to n: Int,
                                       chunkStart: Int) -> Int {
        var j = from
        while true {
            j = Self.find(quote, 0x0A, in: base, from: j, to: n)
            guard j < n, base[j] == 0x0A else { return j }
            newline(at: j, chunkStart: chunkStart)
            j += 1
        }
    }

    /// Counts the newlines in `base[from..<to]` and moves the line start past the last one.
    @inline(__always)
    private mutating func countLines(_ base: UnsafePointer<UInt8>, from: Int, to: Int, chunkStart: Int) {
        var p = from
        while p < to, let found = memchr(base + p, 0x0A, to - p) {
            let index = UnsafeRawPointer(found).assumingMemoryBound(to: UInt8.self) - base
            line += 1
            lineStart = chunkStart + index + 1
            p = index + 1
        }
    }

    /// The number of characters (UTF-8 lead bytes) in `count` bytes.
    @inline(__always)
    static func characters(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> Int {
        var n = 0
        for k in 0..<max(count, 0) where bytes[k] & 0xC0 != 0x80 { n += 1 }
        return n
    }
}
