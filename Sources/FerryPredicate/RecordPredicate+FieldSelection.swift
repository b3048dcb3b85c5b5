import FerryRecords

extension RecordPredicate {
    /// The record parts this predicate can read — the fields named by its key paths, and whether
    /// it reads creation or modification stamps — or `nil` when it may read anything (`SELF`,
    /// full-text search over every field, dynamic key paths).
    ///
    /// Readers use it to decode only those parts before deciding whether a record is wanted.
    public var fieldSelection: FieldSelection? {
        var keys = Set<String>()
        guard collectKeys(into: &keys) else { return nil }
        let stampKeys: Set<String> = ["creationDate", "modificationDate", "creatorUserRecordID", "lastModifiedUserRecordID", "created", "modified"]
        return FieldSelection(fields: keys, includesStamps: !keys.isDisjoint(with: stampKeys))
    }

    private func collectKeys(into keys: inout Set<String>) -> Bool {
        switch self {
        case .constant: return true
        case .comparison(let comparison):
            return comparison.left.collectKeys(into: &keys) && comparison.right.collectKeys(into: &keys)
        case .and(let operands, _), .or(let operands, _):
            return operands.allSatisfy { $0.collectKeys(into: &keys) }
        case .not(let operand, _):
            return operand.collectKeys(into: &keys)
        }
    }
}

extension PredicateExpression {
    /// Adds the root keys this expression reads; `false` when it may read the whole object.
    fileprivate func collectKeys(into keys: inout Set<String>) -> Bool {
        switch self {
        case .string, .integer, .double, .null, .date, .reference, .location, .variable, .placeholder:
            return true
        case .evaluatedObject:
            return false
        case .keyPath(let path):
            guard let first = path.first else { return false }
            keys.insert(first)
            return true
        case .member(let base, _), .index(let base, .first), .index(let base, .last), .index(let base, .size),
             .negation(let base), .cast(let base, _), .assignment(_, let base):
            return base.collectKeys(into: &keys)
        case .index(let base, .expression(let index)):
            return base.collectKeys(into: &keys) && index.collectKeys(into: &keys)
        case .aggregate(let items), .function(_, let items):
            return items.allSatisfy { $0.collectKeys(into: &keys) }
        case .arithmetic(_, let a, let b):
            return a.collectKeys(into: &keys) && b.collectKeys(into: &keys)
        case .method(let receiver, _, let arguments):
            return receiver.collectKeys(into: &keys) && arguments.allSatisfy { $0.collectKeys(into: &keys) }
        case .subquery(let collection, _, let predicate):
            var inner = Set<String>()
            guard collection.collectKeys(into: &keys), predicate.collectKeysForSubquery(into: &inner) else { return false }
            keys.formUnion(inner)
            return true
        case .ternary(let condition, let a, let b):
            var inner = Set<String>()
            guard condition.collectKeysForSubquery(into: &inner) else { return false }
            keys.formUnion(inner)
            return a.collectKeys(into: &keys) && b.collectKeys(into: &keys)
        }
    }
}

extension RecordPredicate {
    fileprivate func collectKeysForSubquery(into keys: inout Set<String>) -> Bool {
        var inner = Set<String>()
        guard let selection = RecordPredicate.collect(self, into: &inner) else { return false }
        keys.formUnion(selection)
        return true
    }

    private static func collect(_ predicate: RecordPredicate, into keys: inout Set<String>) -> Set<String>? {
        guard let selection = predicate.fieldSelection else { return nil }
        return selection.fields
    }
}
