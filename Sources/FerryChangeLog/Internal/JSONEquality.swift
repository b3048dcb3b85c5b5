import FerryRecords

/// JSON value equality as `ferry diff` needs it: objects are unordered maps, arrays ordered,
/// strings compared by their bytes, integers exactly (any size), other numbers by value.
enum JSONEquality {
    static func equal(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.string(let x), .string(let y)): return x.utf8.elementsEqual(y.utf8)
        case (.number(let x), .number(let y)): return equal(x, y)
        case (.array(let x), .array(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { equal($0, $1) }
        case (.object(let x), .object(let y)):
            guard x.count == y.count else { return false }
            var index: [ExactName: JSONValue] = [:]
            for member in y.members { index[ExactName(member.key)] = member.value }
            guard index.count == y.count else { return false }
            for member in x.members {
                guard let other = index[ExactName(member.key)], equal(member.value, other) else { return false }
            }
            return true
        default: return false
        }
    }

    /// Numbers are equal when their exact decimal values are (`1.5`, `1.50` and `15e-1`; never
    /// rounded to a double, so `1e400` and `2e400` differ) and both are integers or both are not:
    /// `1` and `1.0` read back as an INT64 and a DOUBLE. A fraction's zero keeps its sign (`-0.0`
    /// is a double of its own), an integer's does not.
    static func equal(_ x: JSONNumber, _ y: JSONNumber) -> Bool {
        if x.text == y.text { return true }
        guard x.isInteger == y.isInteger, let a = JSONNumber.ExactValue(x.text), let b = JSONNumber.ExactValue(y.text) else { return false }
        if a.digits.isEmpty && b.digits.isEmpty { return x.isInteger || a.isNegative == b.isNegative }
        return a == b
    }
}
