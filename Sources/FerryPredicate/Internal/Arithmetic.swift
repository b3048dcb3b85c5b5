import Foundation

/// Arithmetic on runtime values: integers stay exact until they overflow; `/` and `**` are
/// floating point; dates take and give seconds.
enum Arithmetic {
    static func number(_ value: RuntimeValue, _ what: String) throws(PredicateError) -> Double {
        guard let n = value.numberValue else {
            throw PredicateError.evaluation("expected a number for \(what), found \(value.kindName)")
        }
        return n
    }

    static func normalized(_ value: Double) -> RuntimeValue {
        if let exact = Int64(exactly: value) { return .integer(exact) }
        return .double(value)
    }

    static func apply(_ op: ArithmeticOperator, _ lhs: RuntimeValue, _ rhs: RuntimeValue) throws(PredicateError) -> RuntimeValue {
        switch (op, lhs, rhs) {
        case (.add, .date(let d), _): return .date(d + (try number(rhs, "date arithmetic")))
        case (.add, _, .date(let d)): return .date(d + (try number(lhs, "date arithmetic")))
        case (.subtract, .date(let a), .date(let b)): return normalized(a - b)
        case (.subtract, .date(let d), _): return .date(d - (try number(rhs, "date arithmetic")))
        default: break
        }
        if lhs.isNull || rhs.isNull {
            throw PredicateError.evaluation("expected numbers on both sides of \(op.rawValue), found \(lhs.kindName) and \(rhs.kindName)")
        }
        if case .integer(let a) = lhs, case .integer(let b) = rhs {
            switch op {
            case .add:
                let (r, o) = a.addingReportingOverflow(b)
                return o ? .double(Double(a) + Double(b)) : .integer(r)
            case .subtract:
                let (r, o) = a.subtractingReportingOverflow(b)
                return o ? .double(Double(a) - Double(b)) : .integer(r)
            case .multiply:
                let (r, o) = a.multipliedReportingOverflow(by: b)
                return o ? .double(Double(a) * Double(b)) : .integer(r)
            case .shiftLeft: return .integer(b >= 64 || b < 0 ? 0 : a << b)
            case .shiftRight: return .integer(b >= 64 || b < 0 ? (a < 0 ? -1 : 0) : a >> b)
            case .bitwiseAnd: return .integer(a & b)
            case .bitwiseOr: return .integer(a | b)
            case .bitwiseXor: return .integer(a ^ b)
            case .divide, .power: break
            }
        }
        let a = try number(lhs, "the left of \(op.rawValue)"), b = try number(rhs, "the right of \(op.rawValue)")
        switch op {
        case .add: return normalized(a + b)
        case .subtract: return normalized(a - b)
        case .multiply: return normalized(a * b)
        case .divide:
            if b == 0 { throw PredicateError.evaluation("division by zero") }
            return normalized(a / b)
        case .power: return normalized(pow(a, b))
        case .shiftLeft, .shiftRight, .bitwiseAnd, .bitwiseOr, .bitwiseXor:
            throw PredicateError.evaluation("expected integers on both sides of \(op.rawValue)")
        }
    }

    static func negate(_ value: RuntimeValue) throws(PredicateError) -> RuntimeValue {
        switch value {
        case .integer(let v) where v != .min: return .integer(-v)
        default: return normalized(-(try number(value, "unary minus")))
        }
    }

    /// The mean of finite numbers, finite even where their sum is not (`{1e308, 1e308}`: 1e308).
    static func mean(_ numbers: [Double]) -> Double {
        let n = Double(numbers.count)
        let sum = numbers.reduce(0, +)
        if sum.isFinite || !numbers.allSatisfy(\.isFinite) { return sum / n }
        return numbers.reduce(0) { $0 + $1 / n }
    }

    /// `@sum`, `@avg`, `@min`, `@max` over a collection (nil elements skipped).
    static func aggregate(_ op: String, _ items: [RuntimeValue]) throws(PredicateError) -> RuntimeValue {
        let present = items.filter { !$0.isNull }
        switch op {
        case "@sum":
            var total: RuntimeValue = .integer(0)
            for item in present { total = try apply(.add, total, item) }
            return total
        case "@avg":
            if present.isEmpty { return .null }
            var numbers: [Double] = []
            for item in present { numbers.append(try number(item, "@avg")) }
            return normalized(mean(numbers))
        default:
            guard var best = present.first else { return .null }
            for item in present.dropFirst() {
                if let o = try ComparisonSemantics.order(item, best, []), (op == "@min" ? o < 0 : o > 0) { best = item }
            }
            return best
        }
    }

    /// `CAST(value, "Type")`.
    static func cast(_ value: RuntimeValue, to type: String) throws(PredicateError) -> RuntimeValue {
        switch (type, value) {
        case ("NSDate", .date): return value
        case ("NSDate", _):
            return .date(try number(value, "CAST to NSDate") + PredicateExpression.referenceDateOffset)
        case ("NSNumber", .integer), ("NSNumber", .double): return value
        case ("NSNumber", .string(let text)):
            if let i = Int64(text) { return .integer(i) }
            if let d = Double(text) { return normalized(d) }
            return .integer(0)
        case ("NSNumber", .date(let seconds)): return normalized(seconds - PredicateExpression.referenceDateOffset)
        case ("NSString", .string): return value
        case ("NSString", .integer(let i)): return .string(String(i))
        case ("NSString", .double(let d)): return .string(String(d))
        case ("CKReference", .string(let name)): return .reference(name)
        case ("CKReference", .reference): return value
        case ("CLLocation", .array(let items)) where items.count == 2:
            return .location(latitude: try number(items[0], "latitude"), longitude: try number(items[1], "longitude"))
        case (_, .null): return .null
        default:
            throw PredicateError.evaluation("cannot CAST \(value.kindName) to \(type)")
        }
    }

    /// Great-circle distance in metres (haversine, mean Earth radius).
    static func distance(_ a: (Double, Double), _ b: (Double, Double)) -> Double {
        let r = 6_371_008.8
        let p1 = a.0 * .pi / 180, p2 = b.0 * .pi / 180
        let dp = (b.0 - a.0) * .pi / 180, dl = (b.1 - a.1) * .pi / 180
        let h = sin(dp / 2) * sin(dp / 2) + cos(p1) * cos(p2) * sin(dl / 2) * sin(dl / 2)
        return 2 * r * asin(min(1, sqrt(h)))
    }

    /// Seconds since 1970 now.
    static func now() -> Double { Date().timeIntervalSince1970 }
}
