/// Rewrites a predicate that CloudKit rejects only because of OR, NOT over a compound, or lists
/// longer than a batch, as queries CloudKit accepts whose union of matches is exactly the
/// original's.
///
/// ```swift
/// let queries = try RecordPredicate(parsing: "(a == 1 OR b == 2) AND c > 3").splitForCloudKit()
/// // a == 1 AND c > 3
/// // b == 2 AND c > 3
/// ```
///
/// The rewrite uses only identities that hold for every record:
/// - NOT is pushed down to single comparisons (`NOT (p OR q)` is `NOT p AND NOT q`,
///   `NOT (p AND q)` is `NOT p OR NOT q`, `NOT NOT p` is `p`); a comparison itself is never
///   rewritten (`NOT a > 1` is not `a <= 1` when `a` is missing).
/// - AND is distributed over OR (the disjunctive normal form); each conjunction is one query.
/// - A list longer than ``Configuration/batchSize`` in a form that asks for *some* element of it
///   (`x IN L`, `ANY x IN L`, `ANY L IN x`, `ANY L = x`, `L CONTAINS x`) becomes one comparison per
///   batch, OR-ed; under NOT the batches are AND-ed in the same query (`NOT x IN L` is
///   `NOT x IN B1 AND NOT x IN B2 …`, within CloudKit's limit per filter).
///
/// The queries' results can overlap (a record may match two disjuncts, or two batches of a list
/// field): merge them by record name. A predicate that matches nothing yields no query.
public struct CloudKitSplitter: Sendable {
    /// How to split.
    public struct Configuration: Sendable {
        /// The most values one list may hold in a query (1…250); longer lists are batched.
        public var batchSize: Int
        /// The most queries a split may produce before it fails (the normal form can grow
        /// exponentially: an AND of n two-way ORs has 2ⁿ disjuncts).
        public var maximumQueries: Int
        /// The queried record type, for schema checks of every query.
        public var recordType: String?
        /// A parsed `.ckdb` schema every query must satisfy.
        public var schema: CloudKitSchema?

        /// Creates a configuration; batches of 100 (what CloudKit users batch at) and at most
        /// 1,000 queries by default.
        public init(batchSize: Int = CloudKitValidation.recommendedListValues, maximumQueries: Int = 1000,
                    recordType: String? = nil, schema: CloudKitSchema? = nil) {
            self.batchSize = batchSize
            self.maximumQueries = maximumQueries
            self.recordType = recordType
            self.schema = schema
        }
    }

    /// The configuration.
    public var configuration: Configuration

    /// Creates a splitter.
    public init(_ configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// The queries, each accepted by ``RecordPredicate/validateForCloudKit(recordType:schema:sortKeys:)``,
    /// whose union is `predicate`; empty when `predicate` matches nothing.
    ///
    /// - Throws: ``PredicateError`` with code ``PredicateError/Code-swift.enum/cloudKit`` when some
    ///   part cannot be rewritten into a form CloudKit accepts (``PredicateError/cloudKitReasons``
    ///   lists every reason, with positions in the original text), when the split would need more
    ///   than ``Configuration/maximumQueries`` queries, or when the batch size is outside 1…250.
    public func split(_ predicate: RecordPredicate) throws(PredicateError) -> [RecordPredicate] {
        let limit = CloudKitValidation.maximumListValues
        guard (1...limit).contains(configuration.batchSize) else {
            throw PredicateError(.cloudKit, "the batch size must be between 1 and \(limit), found \(configuration.batchSize)",
                                 expected: "1…\(limit)", found: "\(configuration.batchSize)")
        }
        var conjunctions = try normalForm(predicate, negated: false, notSpan: .unknown)
        if conjunctions.contains(where: \.isEmpty) { conjunctions = [[]] }
        var seen = Set<[RecordPredicate]>()
        var queries: [RecordPredicate] = []
        for conjunction in conjunctions {
            var literals: [RecordPredicate] = []
            var kept = Set<RecordPredicate>()
            for literal in conjunction where kept.insert(literal).inserted { literals.append(literal) }
            if seen.insert(literals).inserted { queries.append(literals.isEmpty ? .constant(true) : .all(literals)) }
        }
        try requireAccepted(queries)
        return queries
    }

    /// Fails with every reason CloudKit would still reject some query, each reported once.
    private func requireAccepted(_ queries: [RecordPredicate]) throws(PredicateError) {
        var reasons: [CloudKitValidation.Finding] = []
        var reported = Set<String>()
        for query in queries {
            let validation = query.validateForCloudKit(recordType: configuration.recordType, schema: configuration.schema)
            for reason in validation.reasons
            where reported.insert("\(reason.rule.rawValue) \(reason.span.offset) \(reason.span.line) \(reason.message)").inserted {
                reasons.append(reason)
            }
        }
        guard let first = reasons.first else { return }
        var error = PredicateError(.cloudKit, "cannot split into queries CloudKit accepts: \(first.message) [\(first.rule.rawValue)]",
                                   span: first.span)
        error.cloudKitReasons = reasons
        throw error
    }

    // MARK: - Disjunctive normal form

    /// One query's comparisons (each a comparison or the NOT of one), AND-ed.
    private typealias Conjunction = [RecordPredicate]

    /// The conjunctions whose OR is `predicate` (negated when `negated`); `[[]]` is true, `[]` false.
    /// `notSpan` is where the NOT being pushed down was written.
    private func normalForm(_ predicate: RecordPredicate, negated: Bool, notSpan: SourceSpan) throws(PredicateError) -> [Conjunction] {
        switch predicate {
        case .constant(let value):
            return value != negated ? [[]] : []
        case .comparison(let comparison):
            let batches = batched(comparison)
            if negated { return [batches.map { .not(.comparison($0), notSpan) }] }
            return batches.map { [.comparison($0)] }
        case .not(let operand, let span):
            return try normalForm(operand, negated: !negated, notSpan: span)
        case .and(let operands, _):
            return try negated ? union(operands, negated: true, notSpan: notSpan) : product(operands, negated: false, notSpan: notSpan)
        case .or(let operands, _):
            return try negated ? product(operands, negated: true, notSpan: notSpan) : union(operands, negated: false, notSpan: notSpan)
        }
    }

    /// OR of the operands: their conjunctions side by side.
    private func union(_ operands: [RecordPredicate], negated: Bool, notSpan: SourceSpan) throws(PredicateError) -> [Conjunction] {
        var result: [Conjunction] = []
        for operand in operands {
            result += try normalForm(operand, negated: negated, notSpan: notSpan)
            try requireWithinLimit(result.count)
        }
        return result
    }

    /// AND of the operands: every choice of one conjunction from each, joined.
    private func product(_ operands: [RecordPredicate], negated: Bool, notSpan: SourceSpan) throws(PredicateError) -> [Conjunction] {
        var result: [Conjunction] = [[]]
        for operand in operands {
            let choices = try normalForm(operand, negated: negated, notSpan: notSpan)
            if choices.isEmpty { return [] }
            let (count, overflow) = result.count.multipliedReportingOverflow(by: choices.count)
            try requireWithinLimit(overflow ? Int.max : count)
            result = result.flatMap { prefix in choices.map { prefix + $0 } }
        }
        return result
    }

    private func requireWithinLimit(_ count: Int) throws(PredicateError) {
        guard count > configuration.maximumQueries else { return }
        throw PredicateError(.cloudKit,
                             "splitting needs more than \(configuration.maximumQueries) queries; simplify the predicate or raise the limit",
                             expected: "at most \(configuration.maximumQueries) queries", found: "more")
    }

    // MARK: - Lists

    /// The comparison, or one comparison per batch of its list when the list is longer than a
    /// batch and the comparison asks whether *some* element of the list qualifies (so it holds
    /// exactly when it holds for some batch).
    private func batched(_ c: PredicateComparison) -> [PredicateComparison] {
        let size = configuration.batchSize
        func chunks(_ items: [PredicateExpression]) -> [PredicateExpression] {
            stride(from: 0, to: items.count, by: size).map { .aggregate(Array(items[$0..<min($0 + size, items.count)])) }
        }
        switch (c.quantifier, c.operator, c.left, c.right) {
        // x IN L, ANY x IN L: some element of L equals x (or one of x's elements).
        case (.direct, .in, _, .aggregate(let items)) where items.count > size,
             (.any, .in, _, .aggregate(let items)) where items.count > size && !c.left.isAggregate:
            return chunks(items).map { var part = c; part.right = $0; return part }
        // ANY L op x, L CONTAINS x: some element of L qualifies.
        case (.any, _, .aggregate(let items), _) where items.count > size,
             (.direct, .contains, .aggregate(let items), _) where items.count > size:
            return chunks(items).map { var part = c; part.left = $0; return part }
        default:
            return [c]
        }
    }
}

extension RecordPredicate {
    /// The queries CloudKit accepts whose union is this predicate (see ``CloudKitSplitter``).
    public func splitForCloudKit(_ configuration: CloudKitSplitter.Configuration = .init()) throws(PredicateError) -> [RecordPredicate] {
        try CloudKitSplitter(configuration).split(self)
    }
}
