import FerryRecords

/// Finds the line and column of an element (or of one of its attributes) inside a record's raw
/// bytes, for error messages: the element is named by its position in document order, which the
/// expanded libxml2 subtree gives and the raw bytes repeat. Runs only when there is an error.
enum XMLLocator {
    /// The 0-based document-order index of the element `target` (or of the element holding it) in
    /// the subtree of `root` (`root` itself is 0).
    static func elementIndex(of target: XMLNodeRef, in root: XMLNodeRef) -> Int? {
        var target = target
        while !target.isElement {
            guard let parent = target.parent else { return nil }
            target = parent
        }
        var index = 0
        var current: XMLNodeRef? = root
        while let node = current {
            if node.isElement {
                if node.pointer == target.pointer { return index }
                index += 1
                if let child = node.firstChild {
                    current = child
                    continue
                }
            }
            var climb = node
            while climb.pointer != root.pointer && climb.nextSibling == nil {
                guard let parent = climb.parent else { return nil }
                climb = parent
            }
            if climb.pointer == root.pointer { return nil }
            current = climb.nextSibling
        }
        return nil
    }

    /// The position of the `elementIndex`-th start tag in `bytes` (whose first byte is at `line`,
    /// `column`), or of its attribute `attribute` when given and present.
    static func locate(in bytes: UnsafeRawBufferPointer, line startLine: Int, column startColumn: Int,
                       elementIndex: Int, attribute: String?) -> (line: Int, column: Int)? {
        var position = TextPosition(line: startLine, column: startColumn)
        var i = 0
        var count = 0
        let n = bytes.count
        /// Moves past `k` bytes, keeping the line and column.
        func advance(_ k: Int) {
            for _ in 0..<k where i < n {
                position.advance(over: bytes[i])
                i += 1
            }
        }
        func starts(with literal: String) -> Bool {
            let utf8 = Array(literal.utf8)
            guard i + utf8.count <= n else { return false }
            for (k, b) in utf8.enumerated() where bytes[i + k] != b { return false }
            return true
        }
        func skip(past terminator: String) {
            while i < n && !starts(with: terminator) { advance(1) }
            advance(terminator.utf8.count)
        }
        while i < n {
            guard bytes[i] == UInt8(ascii: "<") else {
                advance(1)
                continue
            }
            if starts(with: "<!--") { skip(past: "-->"); continue }
            if starts(with: "<![CDATA[") { skip(past: "]]>"); continue }
            if starts(with: "<?") { skip(past: "?>"); continue }
            if starts(with: "</") || starts(with: "<!") { skip(past: ">"); continue }
            // A start tag.
            let tag = (position.line, position.column)
            if count == elementIndex && attribute == nil { return tag }
            let isTarget = count == elementIndex
            count += 1
            advance(1)
            // Walk the tag: names, `=`, quoted values, up to `>`.
            var previousWasSpace = false
            while i < n && bytes[i] != UInt8(ascii: ">") {
                let b = bytes[i]
                if b == UInt8(ascii: "\"") || b == UInt8(ascii: "'") {
                    advance(1)
                    while i < n && bytes[i] != b { advance(1) }
                    advance(1)
                    previousWasSpace = false
                    continue
                }
                if isTarget, previousWasSpace, let attribute, starts(with: attribute) {
                    let after = i + attribute.utf8.count
                    if after < n, bytes[after] == UInt8(ascii: "=") || bytes[after] == 0x20 || bytes[after] == 0x09
                        || bytes[after] == 0x0A || bytes[after] == 0x0D {
                        return (position.line, position.column)
                    }
                }
                previousWasSpace = b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D
                advance(1)
            }
            if isTarget { return tag }
            advance(1)
        }
        return nil
    }
}
