import FerryInternals
import Foundation

/// The functions of the reference table, resolved by name when the predicate is compiled.
enum BuiltinFunction: Sendable {
    case now, sum, count, min, max, average, median, mode, stddev
    case sqrt, log, ln, exp, abs, ceiling, floor, trunc, raise
    case add, subtract, multiply, divide, modulus
    case uppercase, lowercase, distance, noindex
    // FUNCTION(receiver, "selector") methods
    case length, stringValue, integerValue, doubleValue, power

    /// A function call `name(args)`; the name may end with `:` (`sum:`).
    init(name: String, arity: Int) throws(PredicateError) {
        let key = name.hasSuffix(":") && !name.dropLast().contains(":") ? String(name.dropLast()) : name
        let resolved: BuiltinFunction? = switch key.lowercased() {
        case "now": .now
        case "sum": .sum
        case "count": .count
        case "min": .min
        case "max": .max
        case "average": .average
        case "median": .median
        case "mode": .mode
        case "stddev": .stddev
        case "sqrt": .sqrt
        case "log": .log
        case "ln": .ln
        case "exp": .exp
        case "abs": .abs
        case "ceiling": .ceiling
        case "floor": .floor
        case "trunc": .trunc
        case "raise:topower:": .raise
        case "add:to:": .add
        case "from:subtract:": .subtract
        case "multiply:by:": .multiply
        case "divide:by:": .divide
        case "modulus:by:": .modulus
        case "uppercase": .uppercase
        case "lowercase": .lowercase
        case "distancetolocation:fromlocation:": .distance
        case "noindex": .noindex
        default: nil
        }
        guard let resolved else {
            throw PredicateError.evaluation("unknown function \(name); Ferry evaluates sum, count, min, max, average, median, mode, stddev, sqrt, log, ln, exp, raise:toPower:, abs, ceiling, floor, trunc, uppercase, lowercase, now and distanceToLocation:fromLocation:")
        }
        let expected: Int? = switch resolved {
        case .now: 0
        case .raise, .add, .subtract, .multiply, .divide, .modulus, .distance: 2
        case .sum, .count, .min, .max, .average, .median, .mode, .stddev: nil
        default: 1
        }
        if let expected, expected != arity {
            throw PredicateError.evaluation("expected \(Plural.count(expected, "argument")) for \(name), found \(arity)")
        }
        self = resolved
    }

    /// A `FUNCTION(receiver, "selector", …)` method.
    init(method selector: String, arity: Int) throws(PredicateError) {
        switch (selector, arity) {
        case ("uppercaseString", 0): self = .uppercase
        case ("lowercaseString", 0): self = .lowercase
        case ("length", 0): self = .length
        case ("count", 0): self = .count
        case ("stringValue", 0), ("description", 0): self = .stringValue
        case ("intValue", 0), ("integerValue", 0), ("longLongValue", 0): self = .integerValue
        case ("doubleValue", 0), ("floatValue", 0): self = .doubleValue
        case ("pow:", 1), ("raise:", 1): self = .power
        default:
            throw PredicateError.evaluation("FUNCTION selector \"\(selector)\" with \(arity) arguments is not supported by Ferry")
        }
    }

    func call(_ args: [RuntimeValue]) throws(PredicateError) -> RuntimeValue {
        switch self {
        case .now: return .date(Arithmetic.now())
        case .sum, .count, .min, .max, .average, .median, .mode, .stddev:
            var items = args
            if args.count == 1, let inner = args[0].elements { items = inner }
            return try statistic(items)
        case .sqrt, .log, .ln, .exp, .abs, .ceiling, .floor, .trunc:
            if args[0].isNull { return .null }
            let x = try Arithmetic.number(args[0], "\(self)")
            let result: Double = switch self {
            case .sqrt: Foundation.sqrt(x)
            case .log: log10(x)
            case .ln: Foundation.log(x)
            case .exp: Foundation.exp(x)
            case .abs: Swift.abs(x)
            case .ceiling: ceil(x)
            case .floor: Foundation.floor(x)
            default: Foundation.trunc(x)
            }
            if case .integer(let i) = args[0], self == .abs, i != .min { return .integer(Swift.abs(i)) }
            return Arithmetic.normalized(result)
        case .raise, .power: return try Arithmetic.apply(.power, args[0], args[1])
        case .add: return try Arithmetic.apply(.add, args[0], args[1])
        case .subtract: return try Arithmetic.apply(.subtract, args[0], args[1])
        case .multiply: return try Arithmetic.apply(.multiply, args[0], args[1])
        case .divide: return try Arithmetic.apply(.divide, args[0], args[1])
        case .modulus:
            // `Int64.min % -1` is 0, though the division it comes from overflows.
            if case .integer(let a) = args[0], case .integer(let b) = args[1], b != 0 {
                return .integer(a.remainderReportingOverflow(dividingBy: b).partialValue)
            }
            let a = try Arithmetic.number(args[0], "modulus:by:"), b = try Arithmetic.number(args[1], "modulus:by:")
            return Arithmetic.normalized(fmod(a, b))
        case .uppercase, .lowercase:
            if args[0].isNull { return .null }
            guard case .string(let text) = args[0] else {
                throw PredicateError.evaluation("expected a string for \(self), found \(args[0].kindName)")
            }
            return .string(self == .uppercase ? text.uppercased() : text.lowercased())
        case .distance:
            guard case .location(let a1, let a2) = args[0], case .location(let b1, let b2) = args[1] else {
                if args[0].isNull || args[1].isNull { return .null }
                throw PredicateError.evaluation("expected two locations for distanceToLocation:fromLocation:, found \(args[0].kindName) and \(args[1].kindName)")
            }
            return .double(Arithmetic.distance((a1, a2), (b1, b2)))
        case .noindex: return args[0]
        case .length:
            guard case .string(let text) = args[0] else {
                throw PredicateError.evaluation("expected a string for length, found \(args[0].kindName)")
            }
            return .integer(Int64(text.utf16.count))
        case .stringValue: return try Arithmetic.cast(args[0], to: "NSString")
        case .integerValue:
            let number = try Arithmetic.cast(args[0], to: "NSNumber")
            if case .integer = number { return number }
            let n = try Arithmetic.number(number, "integerValue")
            guard let integer = Int64(exactly: n.rounded(.towardZero)) else {
                throw PredicateError.evaluation("expected a number within the range of a 64-bit integer for integerValue, found \(n)")
            }
            return .integer(integer)
        case .doubleValue: return .double(try Arithmetic.number(try Arithmetic.cast(args[0], to: "NSNumber"), "doubleValue"))
        }
    }

    private func statistic(_ items: [RuntimeValue]) throws(PredicateError) -> RuntimeValue {
        switch self {
        case .count: return .integer(Int64(items.count))
        case .sum: return try Arithmetic.aggregate("@sum", items)
        case .min: return try Arithmetic.aggregate("@min", items)
        case .max: return try Arithmetic.aggregate("@max", items)
        case .average: return try Arithmetic.aggregate("@avg", items)
        default: break
        }
        var numbers: [Double] = []
        for item in items where !item.isNull { numbers.append(try Arithmetic.number(item, "\(self)")) }
        guard !numbers.isEmpty else { return .null }
        switch self {
        case .median:
            numbers.sort()
            let mid = numbers.count / 2
            return Arithmetic.normalized(numbers.count % 2 == 1 ? numbers[mid] : Arithmetic.mean([numbers[mid - 1], numbers[mid]]))
        case .mode:
            var counts: [Double: Int] = [:]
            for n in numbers { counts[n, default: 0] += 1 }
            let top = counts.values.max() ?? 0
            return .array(counts.filter { $0.value == top }.keys.sorted().map(Arithmetic.normalized))
        default:
            let mean = Arithmetic.mean(numbers)
            let variance = numbers.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(numbers.count)
            return .double(Foundation.sqrt(variance))
        }
    }
}
