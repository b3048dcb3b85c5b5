/// Any JSON value, kept losslessly: numbers keep their literal text, objects keep their key order.
///
/// Ferry uses it for what the record model does not type: unknown keys, unknown field types,
/// `pluginFields`, and the members of response documents it does not interpret.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

/// A JSON number as written, so that integers beyond 64 bits and every decimal survive a round trip.
public struct JSONNumber: Hashable, Sendable, CustomStringConvertible {
    /// The literal text, e.g. `-12`, `1.5e-7`.
    public let text: String

    /// Creates a number from its literal text (not validated; the scanner only produces valid text).
    public init(text: String) { self.text = text }

    /// Creates a number from an integer.
    public init(_ value: Int64) { text = String(value) }

    /// Creates a number from a double, printed as the shortest text that reads back exactly.
    public init(_ value: Double) { text = JSONNumber.shortestText(value) }

    /// The exact integer value when the text is an integer that fits in 64 bits.
    public var int64Value: Int64? { Int64(text) }

    /// The nearest double.
    public var doubleValue: Double { Double(text) ?? .nan }

    /// Whether the literal has no fraction and no exponent.
    public var isInteger: Bool { !text.utf8.contains { $0 == UInt8(ascii: ".") || $0 | 0x20 == UInt8(ascii: "e") } }

    public var description: String { text }

    /// Shortest round-trip text for a finite double, as JSON allows it (`1e-05`, `-0.0`, `5e-324`).
    public static func shortestText(_ value: Double) -> String {
        value.description
    }
}

/// A JSON object that keeps its members in order and allows lookup by key.
public struct JSONObject: Hashable, Sendable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
    /// One member of an object.
    public struct Member: Hashable, Sendable {
        public var key: String
        public var value: JSONValue
        public init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// The members in document order.
    public var members: [Member]

    /// Creates an object from members in order.
    public init(_ members: [Member] = []) { self.members = members }

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        members = elements.map { Member(key: $0.0, value: $0.1) }
    }

    public var startIndex: Int { members.startIndex }
    public var endIndex: Int { members.endIndex }
    public subscript(position: Int) -> Member { members[position] }

    /// The value for `key` (keys compare by their bytes), or `nil`. Setting `nil` removes the
    /// member; setting a new key appends it.
    public subscript(key: String) -> JSONValue? {
        get { members.first { ExactName.same($0.key, key) }?.value }
        set {
            if let index = members.firstIndex(where: { ExactName.same($0.key, key) }) {
                if let newValue { members[index].value = newValue } else { members.remove(at: index) }
            } else if let newValue {
                members.append(Member(key: key, value: newValue))
            }
        }
    }

    /// Appends a member without checking for an existing key.
    public mutating func append(key: String, value: JSONValue) {
        members.append(Member(key: key, value: value))
    }
}

extension JSONValue {
    /// The string, if this is a string.
    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    /// The object, if this is an object.
    public var objectValue: JSONObject? { if case .object(let o) = self { o } else { nil } }
    /// The array, if this is an array.
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { a } else { nil } }
    /// The number, if this is a number.
    public var numberValue: JSONNumber? { if case .number(let n) = self { n } else { nil } }

    /// The member `key` of an object, else `nil`.
    public subscript(key: String) -> JSONValue? { objectValue?[key] }
}

extension JSONNumber {
    /// A number's exact value: `digits` (no leading or trailing zeros; empty for zero) times ten
    /// to `exponent`, and its sign.
    package struct ExactValue: Equatable {
        package var isNegative = false
        package var digits: [UInt8] = []
        package var exponent = 0

        /// The value of JSON number text; `nil` for text that is not one, or whose exponent is too
        /// large to hold (then only equal texts are equal).
        package init?(_ text: String) {
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
