extension RecordPredicate {
    /// The `MATCHES` patterns of this predicate (outside subqueries) that repeat a group which
    /// itself repeats — `(a+)+`, `(a*)*`, `(?:\\w+\\s?)*`: a backtracking engine, ICU's for
    /// NSPredicate as Swift's for Ferry, may take time exponential in the length of a string it
    /// fails to match. Each with the span of its comparison.
    public var backtrackingPatterns: [(pattern: String, span: SourceSpan)] {
        var found: [(pattern: String, span: SourceSpan)] = []
        func visit(_ predicate: RecordPredicate) {
            switch predicate {
            case .constant: break
            case .and(let operands, _), .or(let operands, _): operands.forEach(visit)
            case .not(let operand, _): visit(operand)
            case .comparison(let comparison):
                if comparison.operator == .matches, case .string(let pattern) = comparison.right,
                   Self.repeatsRepeatingGroup(pattern) {
                    found.append((pattern, comparison.span))
                }
            }
        }
        visit(self)
        return found
    }

    /// Whether `pattern` quantifies (`*`, `+`, `{n,}` or `{n,m}` with m > 1) a group that holds a
    /// quantifier. A heuristic for a warning, not a proof either way (`(a|aa)*` is missed).
    static func repeatsRepeatingGroup(_ pattern: String) -> Bool {
        let chars = Array(pattern.unicodeScalars)
        var groups: [Bool] = [] // per open group: does it hold a quantifier?
        var i = 0
        func isRepetition(at k: Int) -> Bool {
            guard k < chars.count else { return false }
            switch chars[k] {
            case "*", "+": return true
            case "{":
                // `{n}`, `{n,}` or `{n,m}`: digits and one comma, at most 24 characters (so the
                // scan stays linear in the pattern).
                var j = k + 1
                var text = ""
                while j < chars.count, j - k <= 24, chars[j] == "," || ("0"..."9").contains(chars[j]) {
                    text.unicodeScalars.append(chars[j])
                    j += 1
                }
                guard j < chars.count, chars[j] == "}" else { return false }
                let bounds = text.split(separator: ",", omittingEmptySubsequences: false)
                if bounds.count == 2 { return bounds[1].isEmpty || (Int(bounds[1]) ?? 0) > 1 }
                return (Int(text) ?? 0) > 1
            default: return false
            }
        }
        while i < chars.count {
            switch chars[i] {
            case "\\":
                i += 1
            case "[":
                // A character class: up to its closing bracket (a first `]` or `^]` is literal).
                i += 1
                if i < chars.count, chars[i] == "^" { i += 1 }
                if i < chars.count, chars[i] == "]" { i += 1 }
                while i < chars.count, chars[i] != "]" {
                    if chars[i] == "\\" { i += 1 }
                    i += 1
                }
            case "(":
                groups.append(false)
            case ")":
                if let holds = groups.popLast() {
                    if holds && isRepetition(at: i + 1) { return true }
                    if !groups.isEmpty && (holds || isRepetition(at: i + 1)) { groups[groups.count - 1] = true }
                }
            default:
                if isRepetition(at: i), !groups.isEmpty { groups[groups.count - 1] = true }
            }
            i += 1
        }
        return false
    }
}
