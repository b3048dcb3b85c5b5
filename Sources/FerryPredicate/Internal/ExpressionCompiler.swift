import FerryRecords

/// Compiles expressions into closures, once: key names resolved, constants converted,
/// functions looked up.
struct ExpressionCompiler {
    func compile(_ expression: PredicateExpression) throws(PredicateError) -> ValueFunction {
        if let constant = RuntimeValue(constant: expression) { return { _, _ in constant } }
        switch expression {
        case .string, .integer, .double, .null, .date, .reference, .location:
            throw PredicateError.evaluation("unreachable constant")
        case .aggregate(let items):
            let parts = try items.map { (item) throws(PredicateError) in try compile(item) }
            return { record, context throws(PredicateError) in
                var values: [RuntimeValue] = []
                values.reserveCapacity(parts.count)
                for part in parts { values.append(try part(record, context)) }
                return .array(values)
            }
        case .evaluatedObject:
            return { record, context in context.pointee.evaluatedObject(record.pointee) }
        case .keyPath(let components):
            try Self.requireSubstituted(components)
            return try compileKeyPath(components)
        case .member(let base, let components):
            try Self.requireSubstituted(components)
            let baseFunction = try compile(base)
            let walk = try KeyPathWalk(components)
            return { record, context throws(PredicateError) in try walk.apply(to: baseFunction(record, context)) }
        case .index(let base, let index):
            let baseFunction = try compile(base)
            let indexFunction: ValueFunction?
            if case .expression(let inner) = index { indexFunction = try compile(inner) } else { indexFunction = nil }
            return { record, context throws(PredicateError) in
                let value = try baseFunction(record, context)
                return try Self.element(value, index, indexFunction.map { (f) throws(PredicateError) in try f(record, context) })
            }
        case .variable(let name):
            return { record, context throws(PredicateError) in
                guard let value = context.pointee.variables[name] else {
                    throw PredicateError.evaluation("the variable $\(name) is not bound")
                }
                return value
            }
        case .assignment(_, let value):
            return try compile(value)
        case .placeholder(let text):
            throw Self.unsubstituted(text)
        case .arithmetic(let op, let left, let right):
            let l = try compile(left), r = try compile(right)
            return { record, context throws(PredicateError) in try Arithmetic.apply(op, l(record, context), r(record, context)) }
        case .negation(let operand):
            let inner = try compile(operand)
            return { record, context throws(PredicateError) in try Arithmetic.negate(inner(record, context)) }
        case .function(let name, let arguments):
            let function = try BuiltinFunction(name: name, arity: arguments.count)
            let parts = try arguments.map { (item) throws(PredicateError) in try compile(item) }
            return { record, context throws(PredicateError) in
                var values: [RuntimeValue] = []
                for part in parts { values.append(try part(record, context)) }
                return try function.call(values)
            }
        case .method(let receiver, let selector, let arguments):
            let target = try compile(receiver)
            let parts = try arguments.map { (item) throws(PredicateError) in try compile(item) }
            let method = try BuiltinFunction(method: selector, arity: arguments.count)
            return { record, context throws(PredicateError) in
                var values = [try target(record, context)]
                for part in parts { values.append(try part(record, context)) }
                return try method.call(values)
            }
        case .subquery(let collection, let variable, let predicate):
            let source = try compile(collection)
            let condition = try PredicateCompiler().compile(predicate)
            return { record, context throws(PredicateError) in
                let value = try source(record, context)
                if value.isNull { return .array([]) }
                guard let items = value.elements else {
                    throw PredicateError.evaluation("expected a collection as the SUBQUERY source, found \(value.kindName)")
                }
                var inner = context.pointee
                var kept: [RuntimeValue] = []
                for item in items {
                    inner.variables[variable] = item
                    if try withUnsafePointer(to: inner, { (pointer) throws(PredicateError) -> Bool in try condition(record, pointer) }) {
                        kept.append(item)
                    }
                }
                return .array(kept)
            }
        case .ternary(let condition, let then, let otherwise):
            let test = try PredicateCompiler().compile(condition)
            let a = try compile(then), b = try compile(otherwise)
            return { record, context throws(PredicateError) in try test(record, context) ? a(record, context) : b(record, context) }
        case .cast(let value, let type):
            let inner = try compile(value)
            return { record, context throws(PredicateError) in try Arithmetic.cast(inner(record, context), to: type) }
        }
    }

    static func unsubstituted(_ specifier: String) -> PredicateError {
        PredicateError(.argument, "the predicate still has the format specifier \(specifier); give arguments to substitute it",
                       expected: "a format argument for \(specifier)", found: "none")
    }

    /// Throws when a key path still holds an unsubstituted `%K` (`a.%K` parsed without arguments).
    static func requireSubstituted(_ components: [String]) throws(PredicateError) {
        if components.contains(PredicateExpression.keyPlaceholder) { throw unsubstituted(PredicateExpression.keyPlaceholder) }
    }

    /// A key path from the evaluated object; the first key is resolved to a system key or field
    /// name now, not per record.
    func compileKeyPath(_ components: [String]) throws(PredicateError) -> ValueFunction {
        guard let first = components.first else { return { record, context in context.pointee.evaluatedObject(record.pointee) } }
        if first.hasPrefix("@") {
            let walk = try KeyPathWalk(components)
            return { record, context throws(PredicateError) in try walk.apply(to: context.pointee.evaluatedObject(record.pointee)) }
        }
        let key = RecordKey(first)
        let rest = Array(components.dropFirst())
        if rest.isEmpty {
            return { record, context throws(PredicateError) in try context.pointee.value(forRootKey: key, name: first, record: record.pointee) }
        }
        let walk = try KeyPathWalk(rest)
        return { record, context throws(PredicateError) in try walk.apply(to: context.pointee.value(forRootKey: key, name: first, record: record.pointee)) }
    }

    static func element(_ value: RuntimeValue, _ index: PredicateIndex, _ key: RuntimeValue?) throws(PredicateError) -> RuntimeValue {
        if value.isNull { return .null }
        switch (index, value) {
        case (.first, .array(let items)): return items.first ?? .null
        case (.last, .array(let items)): return items.last ?? .null
        case (.size, _):
            guard let items = value.elements else {
                throw PredicateError.evaluation("expected a collection before [SIZE], found \(value.kindName)")
            }
            return .integer(Int64(items.count))
        case (.expression, .array(let items)):
            guard case .integer(let i)? = key else {
                throw PredicateError.evaluation("expected an integer index, found \(key?.kindName ?? "nothing")")
            }
            guard i >= 0, i < items.count else {
                throw PredicateError.evaluation("index \(i) is out of range for a collection of \(items.count)")
            }
            return items[Int(i)]
        case (.expression, _):
            guard case .string(let name)? = key else {
                throw PredicateError.evaluation("expected a string key in [ ] on \(value.kindName)")
            }
            return try value.value(forKey: name)
        default:
            throw PredicateError.evaluation("expected a collection before [FIRST]/[LAST], found \(value.kindName)")
        }
    }
}

/// The keys after the first, with collection operators (`@count`, `@sum`, `@avg`, `@min`, `@max`).
struct KeyPathWalk: Sendable {
    enum Step: Sendable {
        case key(String)
        case count
        case aggregate(String)
    }

    let steps: [Step]

    init(_ components: [String]) throws(PredicateError) {
        steps = try components.map { (component) throws(PredicateError) -> Step in
            switch component {
            case "@count": return .count
            case "@sum", "@avg", "@min", "@max": return .aggregate(component)
            default:
                if component.hasPrefix("@") {
                    throw PredicateError.evaluation("the collection operator \(component) is not supported (use @count, @sum, @avg, @min or @max)")
                }
                return .key(component)
            }
        }
    }

    func apply(to start: RuntimeValue) throws(PredicateError) -> RuntimeValue {
        var value = start
        var index = 0
        while index < steps.count {
            switch steps[index] {
            case .key(let key):
                value = try value.value(forKey: key)
            case .count:
                if value.isNull { return .integer(0) }
                guard let items = value.elements else {
                    throw PredicateError.evaluation("expected a collection before @count, found \(value.kindName)")
                }
                return .integer(Int64(items.count))
            case .aggregate(let op):
                if value.isNull { return .null }
                guard var items = value.elements else {
                    throw PredicateError.evaluation("expected a collection before \(op), found \(value.kindName)")
                }
                let rest = KeyPathWalk(steps: Array(steps[(index + 1)...]))
                if !rest.steps.isEmpty {
                    items = try items.map { (item) throws(PredicateError) in try rest.apply(to: item) }
                }
                return try Arithmetic.aggregate(op, items)
            }
            index += 1
        }
        return value
    }

    private init(steps: [Step]) { self.steps = steps }
}
