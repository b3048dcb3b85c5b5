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

    static func equal(_ x: JSONNumber, _ y: JSONNumber) -> Bool {
        if x.text == y.text { return true }
        if x.isInteger && y.isInteger { return normalizedInteger(x.text) == normalizedInteger(y.text) }
        return x.doubleValue == y.doubleValue && x.doubleValue.sign == y.doubleValue.sign
    }

    private static func normalizedInteger(_ text: String) -> String {
        var digits = Substring(text)
        var negative = false
        if digits.first == "-" {
            negative = true
            digits = digits.dropFirst()
        }
        while digits.count > 1 && digits.first == "0" { digits = digits.dropFirst() }
        return (negative && digits != "0" ? "-" : "") + digits
    }
}
