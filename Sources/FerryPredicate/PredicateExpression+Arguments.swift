import FerryRecords

extension PredicateExpression {
    /// A number constant: integral values that fit 64 bits become ``integer(_:)`` (Apple prints
    /// `2.0` as `2`), others ``double(_:)``.
    public static func number(_ value: Double) -> PredicateExpression {
        if let exact = Int64(exactly: value) {
            return .integer(exact)
        }
        return .double(value)
    }

    /// `CAST(value, type)`, folded into a constant where Apple's printer would print the same
    /// text: a number cast to `NSDate` is a date, a string cast to `CKReference` a reference, and
    /// `{lat, lon}` cast to `CLLocation` a location.
    public static func cast(_ value: PredicateExpression, to type: String) -> PredicateExpression {
        switch (value, type) {
        case (.integer(let n), "NSDate"): return .date(secondsSinceReferenceDate: Double(n))
        case (.double(let n), "NSDate"): return .date(secondsSinceReferenceDate: n)
        case (.string(let name), "CKReference"): return .reference(name)
        case (.aggregate(let items), "CLLocation") where items.count == 2:
            if let lat = items[0].numberValue, let lon = items[1].numberValue {
                return .location(latitude: lat, longitude: lon)
            }
            return .cast(value, type)
        default: return .cast(value, type)
        }
    }

    /// The value of a number constant.
    var numberValue: Double? {
        switch self {
        case .integer(let n): Double(n)
        case .double(let n): n
        default: nil
        }
    }

    /// The constant a JSON format argument stands for: strings, numbers, booleans (as `1`/`0`),
    /// `null`, arrays (as `{…}`), and the typed objects `{"$date": "2024-05-01T12:00:00Z"}` or
    /// `{"$date": <seconds since 1970>}`, `{"$reference": "<recordName>"}`,
    /// `{"$location": [lat, lon]}`.
    public init(jsonArgument value: JSONValue) throws(PredicateError) {
        switch value {
        case .null: self = .null
        case .bool(let flag): self = .integer(flag ? 1 : 0)
        case .string(let text): self = .string(text)
        case .number(let number):
            if let exact = number.int64Value { self = .integer(exact) } else { self = .number(try Self.finite(number)) }
        case .array(let items):
            var out: [PredicateExpression] = []
            out.reserveCapacity(items.count)
            for item in items { out.append(try PredicateExpression(jsonArgument: item)) }
            self = .aggregate(out)
        case .object(let object):
            switch TypedJSON.decode(object) {
            case .date(let seconds)?: self = .date(secondsSinceReferenceDate: seconds - Self.referenceDateOffset)
            case .reference(let name)?: self = .reference(name)
            case .location(let lat, let lon)?: self = .location(latitude: lat, longitude: lon)
            case .invalid(let message)?: throw PredicateError(.argument, message)
            case nil:
                throw PredicateError(.argument,
                                     "expected a value (string, number, boolean, null, array, {\"$date\": …}, {\"$reference\": …} or {\"$location\": […]}), found a JSON object",
                                     expected: "a value", found: "a JSON object")
            }
        }
    }

    /// The value of a JSON number argument, which must be finite as a number literal must be
    /// (`1e400` is infinite as a `Double`, and no text writes infinity).
    static func finite(_ number: JSONNumber) throws(PredicateError) -> Double {
        let value = number.doubleValue
        guard value.isFinite else {
            throw PredicateError(.argument, "expected a finite number, found \(number.text)", expected: "a finite number", found: number.text)
        }
        return value
    }

    /// The expression a format specifier stands for, given its argument.
    static func substituting(_ specifier: String, with argument: JSONValue) throws(PredicateError) -> PredicateExpression {
        if specifier == "%K" {
            guard case .string(let path) = argument, !path.isEmpty else {
                throw PredicateError(.argument, "expected a key path string for %K, found \(argument.kindDescription)",
                                     expected: "a key path string", found: argument.kindDescription)
            }
            let components = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            if components.contains(where: \.isEmpty) {
                throw PredicateError(.argument, "expected a key path for %K, found \"\(path)\" (empty component)",
                                     expected: "a key path", found: "\"\(path)\"")
            }
            if components == ["SELF"] || components == ["self"] { return .evaluatedObject }
            return .keyPath(components.first?.uppercased() == "SELF" ? Array(components.dropFirst()) : components)
        }
        if specifier == "%@" { return try PredicateExpression(jsonArgument: argument) }
        let conversion = specifier.last ?? "@"
        switch conversion {
        case "s", "S", "c", "C":
            if case .string(let text) = argument { return .string(text) }
            if conversion.lowercased() == "c", case .number(let n) = argument, let code = n.int64Value,
               let scalar = Unicode.Scalar(UInt32(clamping: code)) {
                return .string(String(Character(scalar)))
            }
            throw PredicateError(.argument, "expected a string for \(specifier), found \(argument.kindDescription)",
                                 expected: "a string", found: argument.kindDescription)
        default:
            let number: Double
            switch argument {
            case .number(let n):
                if "dDiuUoOxXcC".contains(conversion) {
                    guard let exact = n.int64Value ?? (n.doubleValue == n.doubleValue.rounded() ? Int64(exactly: n.doubleValue) : nil) else {
                        throw PredicateError(.argument, "expected an integer for \(specifier), found \(n.text)",
                                             expected: "an integer", found: n.text)
                    }
                    return .integer(exact)
                }
                number = try Self.finite(n)
            case .bool(let flag): number = flag ? 1 : 0
            default:
                throw PredicateError(.argument, "expected a number for \(specifier), found \(argument.kindDescription)",
                                     expected: "a number", found: argument.kindDescription)
            }
            return .number(number)
        }
    }
}

extension JSONValue {
    /// `a string`, `an array`… for messages.
    var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number(let n): "the number \(n.text)"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
