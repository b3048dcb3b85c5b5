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
        guard x.isInteger == y.isInteger, let a = Decimal(x.text), let b = Decimal(y.text) else { return false }
        if a.digits.isEmpty && b.digits.isEmpty { return x.isInteger || a.isNegative == b.isNegative }
        return a == b
    }

    /// A number's exact value: `digits` (no leading or trailing zeros; empty for zero) times ten
    /// to `exponent`, and its sign.
    private struct Decimal: Equatable {
        var isNegative = false
        var digits: [UInt8] = []
        var exponent = 0

        /// The value of JSON number text; `nil` for text that is not one, or whose exponent is too
        /// large to hold (then only equal texts are equal).
        init?(_ text: String) {
            var bytes = Array(text.utf8)[...]
            if bytes.first == UInt8(ascii: "-") {
                isNegative = true
                bytes = bytes.dropFirst()
            }
            var pointSeen = false
            var fractionDigits = 0
            while let byte = bytes.first, byte != UInt8(ascii: "e") && byte != UInt8(ascii: "E") {
                bytes = bytes.dropFirst()
                if byte == UInt8(ascii: ".") {
                    guard !pointSeen else { return nil }
                    pointSeen = true
                    continue
                }
                guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
                if pointSeen { fractionDigits += 1 }
                if !(digits.isEmpty && byte == UInt8(ascii: "0")) { digits.append(byte) }
            }
            var written = 0
            if !bytes.isEmpty {
                bytes = bytes.dropFirst() // the e
                var negativeExponent = false
                if bytes.first == UInt8(ascii: "-") || bytes.first == UInt8(ascii: "+") {
                    negativeExponent = bytes.first == UInt8(ascii: "-")
                    bytes = bytes.dropFirst()
                }
                guard !bytes.isEmpty else { return nil }
                for byte in bytes {
                    guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"), written < 1 << 40 else { return nil }
                    written = written * 10 + Int(byte - UInt8(ascii: "0"))
                }
                if negativeExponent { written = -written }
            }
            exponent = written - fractionDigits
            while digits.last == UInt8(ascii: "0") {
                digits.removeLast()
                exponent += 1
            }
            if digits.isEmpty { exponent = 0 }
        }
    }
}
