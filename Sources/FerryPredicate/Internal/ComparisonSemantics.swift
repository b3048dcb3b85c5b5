import FerryInternals
import FerryRecords

/// A comparison's right side prepared once when it is a constant: folded strings, LIKE
/// patterns, compiled regular expressions.
struct PreparedOperand: Sendable {
    /// The constant, when the right side is one.
    var value: RuntimeValue
    /// The string constant folded for the options.
    var folded: String?
    /// The LIKE pattern, folded, as characters.
    var likePattern: [Character]?
    /// The MATCHES expression.
    var regex: RegexBox?
    /// The folded right-side tokens for TOKENMATCHES.
    var tokens: Set<String>?
    /// Folded members of a constant collection for IN, when all are strings.
    var foldedMembers: Set<String>?

    init(_ value: RuntimeValue, operator op: PredicateComparison.Operator, options: PredicateComparison.Options) throws(PredicateError) {
        self.value = value
        if case .string(let text) = value {
            folded = StringMatching.fold(text, options)
            switch op {
            case .like: likePattern = Array(folded ?? text)
            case .matches: regex = RegexBox(try ComparisonSemantics.makeRegex(text, options: options))
            case .tokenMatches: tokens = Set(StringMatching.tokens(StringMatching.fold(text, options.union([.caseInsensitive, .diacriticInsensitive]))))
            default: break
            }
        }
        if op == .in, case .array(let items) = value, items.count > 8 {
            var members = Set<String>()
            for item in items {
                guard case .string(let s) = item else { return }
                members.insert(StringMatching.fold(s, options))
            }
            foldedMembers = members
        }
    }
}

/// A compiled regular expression shared by concurrent evaluations. `Regex` is an immutable
/// value whose lazily built program is initialised atomically by the standard library.
final class RegexBox: @unchecked Sendable {
    let regex: Regex<AnyRegexOutput>
    init(_ regex: Regex<AnyRegexOutput>) { self.regex = regex }
}

/// Apple's comparison semantics on runtime values (reference: "Semantics (Apple's, in memory)").
enum ComparisonSemantics {
    static func makeRegex(_ pattern: String, options: PredicateComparison.Options) throws(PredicateError) -> Regex<AnyRegexOutput> {
        do {
            let regex = try Regex(pattern)
            return options.contains(.caseInsensitive) ? regex.ignoresCase() : regex
        } catch {
            throw PredicateError.evaluation("expected a regular expression for MATCHES, found \"\(pattern)\" (\(error))")
        }
    }

    /// `==` with no coercion between kinds; nil equals only nil.
    static func isEqual(_ lhs: RuntimeValue, _ rhs: RuntimeValue, _ options: PredicateComparison.Options) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.null, _), (_, .null): return false
        case (.integer(let a), .integer(let b)): return a == b
        case (.integer, .double), (.double, .integer), (.double, .double):
            return compareNumbers(lhs, rhs) == 0
        case (.string(let a), .string(let b)):
            return options.isEmpty || options == [.normalized] || options == [.localeSensitive]
                ? a == b : StringMatching.fold(a, options) == StringMatching.fold(b, options)
        case (.date(let a), .date(let b)): return compareDates(a, b) == 0
        case (.reference(let a), .reference(let b)): return a == b
        case (.reference(let a), .string(let b)), (.string(let b), .reference(let a)): return a == b
        case (.location(let a1, let a2), .location(let b1, let b2)): return a1 == b1 && a2 == b2
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { isEqual($0, $1, options) }
        case (.object(let a), .object(let b)): return a == b
        case (.record(let a), .record(let b)): return a.recordName == b.recordName && a.zoneName == b.zoneName
        default: return false
        }
    }

    /// Two numbers by value, exactly: an integer against a double compares as the mathematical
    /// numbers they are (`9007199254740993` is more than `9007199254740992.0`, and INT64's largest
    /// is less than `9223372036854775808`), not as two doubles. `nil` when either is NaN.
    static func compareNumbers(_ lhs: RuntimeValue, _ rhs: RuntimeValue) -> Int? {
        switch (lhs, rhs) {
        case (.integer(let a), .integer(let b)): return a < b ? -1 : a == b ? 0 : 1
        case (.integer(let a), .double(let b)): return compare(a, b)
        case (.double(let a), .integer(let b)): return compare(b, a).map { -$0 }
        default:
            guard let a = lhs.numberValue, let b = rhs.numberValue, !a.isNaN, !b.isNaN else { return nil }
            return a < b ? -1 : a == b ? 0 : 1
        }
    }

    /// `a` against `b`, exactly; `nil` when `b` is NaN.
    static func compare(_ a: Int64, _ b: Double) -> Int? {
        if b.isNaN { return nil }
        // Every double at or above 2^63 is above every Int64, every one below -2^63 below it.
        if b >= 0x1p63 { return -1 }
        if b < -0x1p63 { return 1 }
        let whole = b.rounded(.down)  // now exactly an Int64
        let w = Int64(whole)
        if a != w { return a < w ? -1 : 1 }
        return whole == b ? 0 : -1  // b has a fraction above its floor
    }

    /// Dates (seconds since 1970) compare by their milliseconds (``ISO8601/milliseconds(seconds:)``),
    /// as CloudKit's TIMESTAMPs do: a date written to the millisecond equals the TIMESTAMP of that
    /// millisecond, so evaluation agrees with the filterBy translation.
    static func compareDates(_ a: Double, _ b: Double) -> Int {
        var x = ISO8601.milliseconds(seconds: a), y = ISO8601.milliseconds(seconds: b)
        if !x.isFinite || !y.isFinite { (x, y) = (a, b) }
        return x < y ? -1 : x == y ? 0 : 1
    }

    /// Ordering of like kinds; `nil` when either side is nil; an error for unlike kinds.
    static func order(_ lhs: RuntimeValue, _ rhs: RuntimeValue, _ options: PredicateComparison.Options) throws(PredicateError) -> Int? {
        switch (lhs, rhs) {
        case (.null, _), (_, .null): return nil
        case (.integer(let a), .integer(let b)): return a < b ? -1 : a == b ? 0 : 1
        case (.integer, .double), (.double, .integer), (.double, .double):
            return compareNumbers(lhs, rhs)
        case (.string(let a), .string(let b)):
            let x = StringMatching.fold(a, options), y = StringMatching.fold(b, options)
            return x < y ? -1 : x == y ? 0 : 1
        case (.date(let a), .date(let b)): return compareDates(a, b)
        default:
            throw PredicateError.evaluation("cannot order \(lhs.kindName) against \(rhs.kindName)")
        }
    }

    /// Evaluates `lhs OP rhs` for one (unquantified) pair of values.
    static func evaluate(_ op: PredicateComparison.Operator, _ lhs: RuntimeValue, _ rhs: RuntimeValue,
                         _ options: PredicateComparison.Options, prepared: PreparedOperand?) throws(PredicateError) -> Bool {
        switch op {
        case .equalTo:
            if let folded = prepared?.folded, case .string(let a) = lhs {
                return options.subtracting([.normalized, .localeSensitive]).isEmpty ? a == folded : StringMatching.fold(a, options) == folded
            }
            return isEqual(lhs, rhs, options)
        case .notEqualTo:
            return !(try evaluate(.equalTo, lhs, rhs, options, prepared: prepared))
        case .lessThan: return try order(lhs, rhs, options).map { $0 < 0 } ?? false
        case .lessThanOrEqualTo: return try order(lhs, rhs, options).map { $0 <= 0 } ?? false
        case .greaterThan: return try order(lhs, rhs, options).map { $0 > 0 } ?? false
        case .greaterThanOrEqualTo: return try order(lhs, rhs, options).map { $0 >= 0 } ?? false
        case .between:
            guard case .array(let bounds) = rhs, bounds.count == 2 else {
                if rhs.isNull || lhs.isNull { return false }
                throw PredicateError.evaluation("expected a two-element collection {low, high} on the right of BETWEEN, found \(rhs.kindName)")
            }
            guard let low = try order(lhs, bounds[0], options), let high = try order(lhs, bounds[1], options) else { return false }
            return low >= 0 && high <= 0
        case .contains:
            if lhs.isNull || rhs.isNull && !lhs.isCollection { return false }
            if case .string(let text) = lhs {
                guard case .string(let part) = rhs else {
                    throw PredicateError.evaluation("expected a string on the right of CONTAINS with a string on the left, found \(rhs.kindName)")
                }
                return StringMatching.contains(StringMatching.fold(text, options), prepared?.folded ?? StringMatching.fold(part, options))
            }
            if let items = lhs.elements { return items.contains { isEqual($0, rhs, options) } }
            throw PredicateError.evaluation("expected a string or a collection on the left of CONTAINS, found \(lhs.kindName)")
        case .in:
            if rhs.isNull { return false }
            if case .string(let text) = rhs {
                if lhs.isNull { return false }
                guard case .string(let part) = lhs else {
                    throw PredicateError.evaluation("expected a string on the left of IN with a string on the right, found \(lhs.kindName)")
                }
                return StringMatching.contains(StringMatching.fold(text, options), StringMatching.fold(part, options))
            }
            if let members = prepared?.foldedMembers {
                guard case .string(let s) = lhs else { return false }
                return members.contains(StringMatching.fold(s, options))
            }
            if let items = rhs.elements { return items.contains { isEqual(lhs, $0, options) } }
            throw PredicateError.evaluation("expected a collection or a string on the right of IN, found \(rhs.kindName)")
        case .beginsWith, .endsWith, .like, .matches, .tokenMatches:
            if lhs.isNull || rhs.isNull { return false }
            guard case .string(let text) = lhs, case .string(let pattern) = rhs else {
                throw PredicateError.evaluation("expected strings on both sides of \(op.text), found \(lhs.kindName) and \(rhs.kindName)")
            }
            switch op {
            case .beginsWith:
                return StringMatching.fold(text, options).hasPrefix(prepared?.folded ?? StringMatching.fold(pattern, options))
            case .endsWith:
                return StringMatching.fold(text, options).hasSuffix(prepared?.folded ?? StringMatching.fold(pattern, options))
            case .like:
                return StringMatching.like(Array(StringMatching.fold(text, options)),
                                           prepared?.likePattern ?? Array(StringMatching.fold(pattern, options)))
            case .matches:
                let regex: Regex<AnyRegexOutput>
                if let prepared = prepared?.regex { regex = prepared.regex } else { regex = try makeRegex(pattern, options: options) }
                let subject = options.contains(.diacriticInsensitive) ? StringMatching.fold(text, [.diacriticInsensitive]) : text
                return subject.wholeMatch(of: regex) != nil
            default:
                let all: PredicateComparison.Options = options.union([.caseInsensitive, .diacriticInsensitive])
                let wanted = prepared?.tokens ?? Set(StringMatching.tokens(StringMatching.fold(pattern, all)))
                let have = Set(StringMatching.tokens(StringMatching.fold(text, all)))
                return !wanted.isDisjoint(with: have)
            }
        case .utiConformsTo, .utiEquals:
            throw PredicateError.evaluation("\(op.text) needs Apple's type registry and cannot be evaluated by Ferry")
        case .customSelector(let selector):
            throw PredicateError.evaluation("the custom selector \(selector) cannot be evaluated by Ferry")
        }
    }

    /// Full-text search of a record (`SELF CONTAINS "words"`): any token of the words equals a
    /// token of a string or string-list field, ignoring case and diacritics.
    static func fullText(_ record: Record, tokens wanted: Set<String>) -> Bool {
        guard !wanted.isEmpty, let fields = record.fields else { return false }
        func search(_ value: FieldValue) -> Bool {
            switch value {
            case .string(let text):
                let folded = StringMatching.fold(text, [.caseInsensitive, .diacriticInsensitive])
                return StringMatching.tokens(folded).contains { wanted.contains($0) }
            case .list(let items): return items.contains(where: search)
            default: return false
            }
        }
        return fields.entries.contains { search($0.field.value) }
    }
}

extension RuntimeValue {
    var isCollection: Bool {
        switch self {
        case .array, .object: true
        default: false
        }
    }
}
