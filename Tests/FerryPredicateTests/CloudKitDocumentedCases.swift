import FerryPredicate
import Testing

/// One predicate from the documentation, with the verdict and the reason the documentation gives.
struct DocumentedCase: CustomTestStringConvertible, Sendable {
    enum Verdict: Sendable {
        /// Accepted; with the filterBy comparators it translates to (`nil`: no filterBy form to check).
        case accepted([String]?)
        /// Rejected; the first reason's rule and its 1-based column (0: no position, e.g. the record type).
        case rejected(CloudKitValidation.Rule, column: Int)
    }

    let source: String
    let predicate: String
    let arguments: String?
    let verdict: Verdict
    let reason: String
    /// With a record type, the case is checked against ``CloudKitDocumentedCases/schema``.
    var recordType: String?
    /// A warning the case must carry.
    var warning: CloudKitValidation.Rule?

    var testDescription: String { "\(source): \(predicate.count > 70 ? String(predicate.prefix(70)) + "…" : predicate)" }

    static func ok(_ source: String, _ predicate: String, _ comparators: [String]?, args: String? = nil, _ reason: String,
                   recordType: String? = nil, warning: CloudKitValidation.Rule? = nil) -> DocumentedCase {
        DocumentedCase(source: source, predicate: predicate, arguments: args, verdict: .accepted(comparators), reason: reason,
                       recordType: recordType, warning: warning)
    }

    static func no(_ source: String, _ predicate: String, _ rule: CloudKitValidation.Rule, column: Int, args: String? = nil,
                   _ reason: String, recordType: String? = nil) -> DocumentedCase {
        DocumentedCase(source: source, predicate: predicate, arguments: args, verdict: .rejected(rule, column: column), reason: reason,
                       recordType: recordType)
    }
}

/// Every predicate example in Apple's CKQuery documentation (its listings and its predicate
/// rules), in `reference/predicate-language.md` ("What CloudKit's CKQuery accepts") and in
/// `reference/cloudkit-json.md` (queries and limits), plus the rows of issue #24.
enum CloudKitDocumentedCases {
    /// A format-argument array holding one list of `count` references.
    static func references(_ count: Int) -> String {
        "[[" + (0..<count).map { #"{"$reference": "r\#($0)"}"# }.joined(separator: ", ") + "]]"
    }

    /// A format-argument array holding one list of `count` strings.
    static func strings(_ count: Int) -> String {
        "[[" + (0..<count).map { #""c\#($0)""# }.joined(separator: ", ") + "]]"
    }

    static let schema = """
    DEFINE SCHEMA
        RECORD TYPE Person (
            "___recordID"   REFERENCE QUERYABLE,
            "___createTime" TIMESTAMP SORTABLE,
            "___modTime"    TIMESTAMP SORTABLE,
            "___createdBy"  REFERENCE QUERYABLE,
            "___modifiedBy" REFERENCE QUERYABLE,
            name            STRING QUERYABLE SEARCHABLE,
            nickname        STRING,
            favoriteColor   STRING QUERYABLE,
            favoriteColors  LIST<STRING> QUERYABLE,
            age             INT64 QUERYABLE SORTABLE,
            employee        REFERENCE QUERYABLE,
            relatedRecords  LIST<REFERENCE> QUERYABLE,
            location        LOCATION QUERYABLE,
            photo           ASSET
        );
        RECORD TYPE Note (
            body STRING QUERYABLE
        );
    """

    static let ckQueryListings: [DocumentedCase] = [
        .ok("CKQuery Listing 1", "employee == %@", ["EQUALS"], args: #"[{"$reference": "E1"}]"#,
            "a reference field matches the record ID in a CKRecord.Reference"),
        .ok("CKQuery Listing 2", "ANY favoriteColors = 'red'", ["LIST_CONTAINS"], "the list field contains the value"),
        .ok("CKQuery Listing 2", "favoriteColors CONTAINS 'red'", ["LIST_CONTAINS"], "the list field contains the value"),
        .ok("CKQuery Listing 2", "'red' IN favoriteColors", ["LIST_CONTAINS"], "the list field contains the value"),
        .ok("CKQuery Listing 2", "%K CONTAINS %@", ["LIST_CONTAINS"], args: #"["favoriteColors", "red"]"#,
            "the list field contains the value"),
        .ok("CKQuery Listing 3", "ANY { 'red', 'green' } = favoriteColor", ["IN"], "the field matches either value"),
        .ok("CKQuery Listing 3", "favoriteColor IN { 'red', 'green' }", ["IN"], "the field matches either value"),
        .ok("CKQuery Listing 4", "ANY favoriteColors BEGINSWITH 'red'", ["LIST_MEMBER_BEGINS_WITH"],
            "a string in the field starts with the value (case-sensitive)"),
        .ok("CKQuery Listing 4", "ANY favoriteColors BEGINSWITH %@", ["LIST_MEMBER_BEGINS_WITH"], args: #"["red"]"#,
            "a string in the field starts with the value (case-sensitive)"),
        .ok("CKQuery Listing 5", "self contains 'bob smith'", ["CONTAINS_ANY_TOKENS"], "full-text search for either token"),
        .ok("CKQuery Listing 6", "self contains 'bob' AND self contains 'smith'", ["CONTAINS_ALL_TOKENS"],
            "full-text search for both tokens, joined with AND"),
        .ok("CKQuery Listing 7", "distanceToLocation:fromLocation:(location, %@) < %f", ["NEAR"],
            args: #"[{"$location": [37.331913, -122.030210]}, 10]"#, "the location lies inside the circle"),
        .ok("CKQuery Listing 8", "TRUEPREDICATE", [], "every record of the type"),
    ]

    static let ckQueryRules: [DocumentedCase] = [
        .ok("CKQuery rules", "creationDate > %@", ["GREATER_THAN"], args: #"[{"$date": "2024-05-01T12:00:00Z"}]"#,
            "key names can name metadata properties such as creationDate"),
        .ok("CKQuery rules", "age > %@", ["GREATER_THAN"], args: "[30]", "%@ stands for value objects: strings, numbers, dates"),
        .ok("CKQuery rules", "%K == %@", ["EQUALS"], args: #"["favoriteColor", "red"]"#, "%K stands for the name of a field"),
        .no("CKQuery rules", "employee.name == 'Ann'", .keyPath, column: 1, "key paths cannot name fields of related records"),
        .no("CKQuery rules", "name CONTAINS 'bob'", .stringContains, column: 6,
            "CONTAINS is only for list membership, except SELF CONTAINS (full text)", recordType: "Person"),
        .ok("CKQuery rules", "self contains 'blue'", ["CONTAINS_ANY_TOKENS"], "SELF CONTAINS searches the searchable string fields"),
        .ok("CKQuery rules", "SOME favoriteColors IN {'red', 'green'}", ["LIST_CONTAINS_ANY"],
            "ANY and SOME combine with IN for list membership"),
        .ok("CKQuery rules", "ANY favoriteColors CONTAINS 'red'", ["LIST_CONTAINS"],
            "ANY and SOME combine with CONTAINS for list membership", warning: .quantifiedContains),
        .no("CKQuery rules", "distanceToLocation:fromLocation:(location, %@) > 10", .distanceDirection, column: 48,
            "distance only finds locations inside the circle"),
        .no("CKQuery rules", "ALL favoriteColors == 'red'", .allOrNone, column: 1, "CloudKit doesn't support ALL"),
        .no("CKQuery rules", "NOT (favoriteColor == 'red' AND age > 3)", .notOperand, column: 1, "NOT cannot negate an AND"),
        .no("CKQuery rules", "NOT self CONTAINS 'value'", .notOperand, column: 1, "NOT cannot be used in tokenized queries"),
        .no("CKQuery rules", "NOT distanceToLocation:fromLocation:(location, %@) < 10", .notOperand, column: 1,
            "NOT cannot be used with distanceToLocation:fromLocation:"),
        .no("CKQuery rules", "NOT age BETWEEN {18, 65}", .notOperand, column: 1, "NOT cannot be used in BETWEEN queries"),
        .no("CKQuery rules", "photo == %@", .assetField, column: 1,
            "fields hold strings, dates, numbers, arrays, references or locations, not assets", recordType: "Person"),
        .no("CKQuery.init", "TRUEPREDICATE", .usersType, column: 0, "records of type Users cannot be queried", recordType: "Users"),
    ]

    static let ckQueryOperators: [DocumentedCase] = [
        .ok("CKQuery operators", "age == 30", ["EQUALS"], "basic comparison =="),
        .ok("CKQuery operators", "age = 30", ["EQUALS"], "basic comparison ="),
        .ok("CKQuery operators", "age >= 18", ["GREATER_THAN_OR_EQUALS"], "basic comparison >="),
        .ok("CKQuery operators", "age => 18", ["GREATER_THAN_OR_EQUALS"], "basic comparison =>"),
        .ok("CKQuery operators", "age <= 65", ["LESS_THAN_OR_EQUALS"], "basic comparison <="),
        .ok("CKQuery operators", "age =< 65", ["LESS_THAN_OR_EQUALS"], "basic comparison =<"),
        .ok("CKQuery operators", "age > 17", ["GREATER_THAN"], "basic comparison >"),
        .ok("CKQuery operators", "age < 66", ["LESS_THAN"], "basic comparison <"),
        .ok("CKQuery operators", "age != 30", ["NOT_EQUALS"], "basic comparison !="),
        .ok("CKQuery operators", "age <> 30", ["NOT_EQUALS"], "basic comparison <>"),
        .ok("CKQuery operators", "age BETWEEN {18, 65}", ["GREATER_THAN_OR_EQUALS", "LESS_THAN_OR_EQUALS"], "BETWEEN"),
        .ok("CKQuery operators", "FALSEPREDICATE", nil, "boolean value predicate FALSEPREDICATE"),
        .ok("CKQuery operators", "age > 17 && favoriteColor == 'red'", ["GREATER_THAN", "EQUALS"], "compound AND, &&"),
        .ok("CKQuery operators", "NOT favoriteColor == 'red'", ["NOT_EQUALS"], "compound NOT"),
        .ok("CKQuery operators", "name BEGINSWITH 'Bo'", ["BEGINS_WITH"], "string comparison BEGINSWITH"),
        .ok("CKQuery operators", "favoriteColor IN %@", ["IN"], args: #"[["red", "green"]]"#, "aggregate operation IN"),
        .ok("CKQuery operators", "creationDate < now()", nil, "function now"),
        .ok("CKQuery operators", "ALL tokenize(%@, 'Cdl') IN allTokens", ["CONTAINS_ALL_TOKENS"], args: #"["bob smith"]"#,
            "function tokenize:using: (every token of the words)"),
        .no("CKQuery operators", "name ENDSWITH 'ob'", .unsupportedOperator, column: 6,
            "BEGINSWITH is the only string comparison; not CONTAINS or ENDSWITH"),
        .no("CKQuery operators", "name LIKE 'B*'", .unsupportedOperator, column: 6, "LIKE is not a supported operator"),
        .no("CKQuery operators", "name MATCHES 'B.*'", .unsupportedOperator, column: 6, "MATCHES is not a supported operator"),
        .no("CKQuery operators", "favoriteColor == 'red' OR age > 3", .or, column: 24, "the compound operators are AND, && and NOT"),
        .ok("CKQuery Listing 4", "name BEGINSWITH[c] 'bo'", ["BEGINS_WITH"], "BEGINSWITH matches are case-sensitive",
            warning: .undocumentedOptions),
        .no("CKQuery Listing 4", "age BEGINSWITH '1'", .beginsWithNonString, column: 1,
            "BEGINSWITH needs a field that contains a string value", recordType: "Person"),
        .no("CKQuery Listing 4", "name BEGINSWITH 5", .beginsWithNonString, column: 17, "BEGINSWITH needs a string to start with"),
    ]

    static let predicateLanguage: [DocumentedCase] = [
        .ok("predicate-language.md", "'red' == favoriteColor", ["EQUALS"], "constant == field"),
        .ok("predicate-language.md", "ANY favoriteColors == 'red'", ["LIST_CONTAINS"], "ANY listField == constant"),
        .ok("predicate-language.md", "ANY favoriteColors IN {'red', 'blue'}", ["LIST_CONTAINS_ANY"], "ANY listField IN constant"),
        .ok("predicate-language.md", "allTokens TOKENMATCHES[cdl] 'bob'", ["CONTAINS_ALL_TOKENS"],
            "allTokens TOKENMATCHES[cdl] constant is the other full-text form"),
        .no("predicate-language.md", "allTokens TOKENMATCHES 'bob'", .tokenMatches, column: 11, "[cdl] is required"),
        .ok("predicate-language.md", "NOT favoriteColor IN {'red'}", ["NOT_IN"], "NOT of an IN leaf"),
        .ok("predicate-language.md", "NOT name BEGINSWITH 'Bo'", ["NOT_BEGINS_WITH"], "NOT of a BEGINSWITH leaf"),
        .ok("predicate-language.md", "NOT favoriteColors CONTAINS 'red'", ["NOT_LIST_CONTAINS"], "NOT of a list-membership leaf"),
        .ok("predicate-language.md", "favoriteColor IN %@", ["IN"], args: strings(250), "at most 250 values; warned above 100",
            warning: .inListTooLong),
        .no("predicate-language.md", "favoriteColor IN %@", .inListTooLong, column: 18, args: strings(251),
            "IN lists over 250 values fail"),
        .no("predicate-language.md", "favoriteColor == 'red' || age > 3", .or, column: 24, "OR / || is rejected"),
        .ok("CKQuery rules", "NONE favoriteColors == 'red'", ["NOT_LIST_CONTAINS"],
            "CloudKit doesn't support ALL; NONE is NOT ANY, the negation of a list test"),
        .ok("CKQuery Listing 2", "NOT ANY favoriteColors = 'red'", ["NOT_LIST_CONTAINS"],
            "the negation of ANY favoriteColors = 'red', which gives the same results as favoriteColors CONTAINS 'red'"),
        .ok("QueryFilterComparator", "NOT ANY favoriteColors IN {'red', 'green'}", ["NOT_LIST_CONTAINS_ANY"],
            "CloudKit JS lists NOT_LIST_CONTAINS_ANY"),
        .ok("QueryFilterComparator", "NOT ANY favoriteColors BEGINSWITH 'r'", ["NOT_LIST_MEMBER_BEGINS_WITH"],
            "CloudKit JS lists NOT_LIST_MEMBER_BEGINS_WITH"),
        .no("predicate-language.md", "name UTI-CONFORMS-TO 'public.text'", .unsupportedOperator, column: 6, "UTI-* is rejected"),
        .no("predicate-language.md", "favoriteColors.@count > 1", .keyPath, column: 1, "key paths with '@' are rejected"),
        .no("predicate-language.md", "SUBQUERY(favoriteColors, $c, $c == 'red').@count > 0", .unsupportedExpression, column: 1,
            "SUBQUERY is rejected"),
        .no("predicate-language.md", "FUNCTION(name, 'length') > 3", .unsupportedExpression, column: 1, "FUNCTION is rejected"),
        .no("predicate-language.md", "TERNARY(age > 3, 1, 0) == 1", .unsupportedExpression, column: 1, "TERNARY is rejected"),
        .no("predicate-language.md", "age + 1 > 18", .unsupportedExpression, column: 1, "arithmetic is rejected"),
        .no("predicate-language.md", "age & 1 == 1", .unsupportedExpression, column: 1, "bitwise operators are rejected"),
        .no("predicate-language.md", "favoriteColors[0] == 'red'", .unsupportedExpression, column: 1, "index [ ] is rejected"),
        .no("predicate-language.md", "favoriteColor == name", .fieldToField, column: 18, "field-to-field comparisons are rejected"),
        .no("predicate-language.md", "parent == %@", .parent, column: 1, "parent cannot be queried"),
        .no("predicate-language.md", "_age == 1", .nameFormat, column: 1, "names match [a-zA-Z][a-zA-Z0-9_]*"),
        .no("predicate-language.md", "distanceToLocation:fromLocation:(location, %@) >= 10", .distanceDirection, column: 48,
            "> and >= with distanceToLocation are rejected"),
        .ok("predicate-language.md", "name ==[c] 'bob'", ["EQUALS"], "options such as [c] are undocumented: warn",
            warning: .undocumentedOptions),
        .ok("predicate-language.md", "name == 'Bob'", ["EQUALS"], "CloudKit's string equality is case-insensitive: note",
            warning: .caseInsensitiveEquality),
        .ok("predicate-language.md", "recordID == %@", ["EQUALS"], args: #"[{"$reference": "p1"}]"#, "system key recordID"),
        .ok("predicate-language.md", "modificationDate > %@", ["GREATER_THAN"], args: #"[{"$date": 0}]"#, "system key modificationDate"),
        .ok("predicate-language.md", "creatorUserRecordID == %@", ["EQUALS"], args: #"[{"$reference": "_u1"}]"#,
            "system key creatorUserRecordID"),
        .ok("predicate-language.md", "lastModifiedUserRecordID == %@", ["EQUALS"], args: #"[{"$reference": "_u1"}]"#,
            "system key lastModifiedUserRecordID"),
        .no("predicate-language.md", "recordType == 'Person'", .systemKey, column: 1, "the record type is given with the query"),
        .no("predicate-language.md", "nickname == 'x'", .notQueryable, column: 1, "equality needs QUERYABLE", recordType: "Person"),
        .no("predicate-language.md", "name > 'B'", .notSortable, column: 1, "ordering needs SORTABLE", recordType: "Person"),
        .no("predicate-language.md", "TRUEPREDICATE", .notQueryable, column: 0, "an unfiltered query needs ___recordID QUERYABLE",
            recordType: "Note"),
        .no("predicate-language.md", "self CONTAINS 'x'", .notSearchable, column: 6, "full text needs a SEARCHABLE field",
            recordType: "Note"),
    ]

    static let cloudKitJSON: [DocumentedCase] = [
        .no("cloudkit-json.md", "age > 17 OR age < 3", .or, column: 10, "filters are AND-ed (no OR exists)"),
        .ok("cloudkit-json.md", "NOT age IN {1, 2}", ["NOT_IN"], "IN and NOT_IN take a typed *_LIST value"),
        .ok("cloudkit-json.md", "favoriteColor IN %@", ["IN"], args: strings(200),
            "users report server errors from about 200 values and batch at 100", warning: .inListTooLong),
        .no("cloudkit-json.md", "favoriteColor IN %@", .inListTooLong, column: 18, args: strings(300),
            "IN filters over 250 values fail with \"Query filter exceeds the limit of values: 250\""),
    ]

    /// The rows of issue #24 and the CKReference article's reaction query.
    static let issue24: [DocumentedCase] = [
        .ok("issue #24", "ANY { 'red', 'green' } = favoriteColor", ["IN"], "Apple's CKQuery documentation shows it as valid"),
        .ok("issue #24", "ANY %@ in relatedRecords", ["LIST_CONTAINS_ANY"], args: references(3),
            "the CKReference article's reaction query"),
        .ok("issue #24", "ANY %@ in relatedRecords", ["LIST_CONTAINS_ANY"], args: references(250),
            "works in production up to 250 values", warning: .inListTooLong),
        .no("issue #24", "ANY %@ in relatedRecords", .inListTooLong, column: 1, args: references(251), "over 250 values it fails"),
        .no("issue #24", "ANY relatedRecords IN %@", .inListTooLong, column: 23, args: references(300),
            "fails: \"Query filter exceeds the limit of values: 250\""),
        .no("issue #24", "relatedRecords IN %@", .inListTooLong, column: 19, args: references(300),
            "fails: \"Query filter exceeds the limit of values: 250\""),
        .no("issue #24", "NOT favoriteColor IN %@", .inListTooLong, column: 22, args: strings(300), "the NOT form carries the list too"),
        .no("issue #24", "age BETWEEN {0, {1, 10}}", .betweenBounds, column: 13, "a nested aggregate is not a valid bound"),
    ]

    static var all: [DocumentedCase] {
        ckQueryListings + ckQueryRules + ckQueryOperators + predicateLanguage + cloudKitJSON + issue24
    }
}
