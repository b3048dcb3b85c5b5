import FerryRecords

extension RecordPredicate {
    /// Checks this predicate against what CloudKit's `CKQuery` accepts: every reason it would be
    /// rejected, with its position and rule, plus warnings (undocumented options, CloudKit's
    /// case-insensitive string equality).
    ///
    /// - Parameters:
    ///   - recordType: the queried record type (`Users` cannot be queried); with a schema it
    ///     selects the fields to check.
    ///   - schema: a parsed `.ckdb` schema: fields must exist, types must fit, and the needed
    ///     QUERYABLE / SORTABLE / SEARCHABLE indexes must exist.
    ///   - sortKeys: fields the query sorts by (each needs SORTABLE).
    public func validateForCloudKit(recordType: String? = nil, schema: CloudKitSchema? = nil,
                                    sortKeys: [String] = []) -> CloudKitValidation {
        var validator = CloudKitValidator(recordType: recordType, schema: schema)
        validator.validate(self, sortKeys: sortKeys)
        return CloudKitValidation(reasons: validator.reasons, warnings: validator.warnings)
    }

    /// The CKWS `query.filterBy` array for this predicate (`[]` for TRUEPREDICATE).
    ///
    /// - Throws: ``PredicateError`` when CloudKit would reject the predicate (the message names
    ///   the first reason) or format specifiers remain unsubstituted.
    public func cloudKitFilterBy() throws(PredicateError) -> JSONValue {
        let validation = validateForCloudKit()
        if let first = validation.reasons.first {
            var error = PredicateError(.cloudKit, "CloudKit would reject this predicate: \(first.message) [\(first.rule.rawValue)]",
                                       span: first.span)
            error.cloudKitReasons = validation.reasons
            throw error
        }
        var translator = CloudKitFilterTranslator()
        return try translator.translate(self)
    }
}
