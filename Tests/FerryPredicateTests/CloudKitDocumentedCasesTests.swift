import FerryPredicate
import FerryRecords
import Testing

@Suite("CloudKit: documented cases")
struct CloudKitDocumentedCasesTests {
    static let schema: CloudKitSchema = {
        do { return try CloudKitSchema(parsing: CloudKitDocumentedCases.schema) } catch { fatalError("fixture: \(error)") }
    }()

    static func validate(_ entry: DocumentedCase, recordType: String?) throws -> (RecordPredicate, CloudKitValidation) {
        let predicate = try RecordPredicate(parsing: entry.predicate, arguments: parseArguments(entry.arguments))
        let schema = recordType == nil ? nil : Self.schema
        return (predicate, predicate.validateForCloudKit(recordType: recordType, schema: schema))
    }

    @Test("The validator gives every documented case its documented verdict, rule and position",
          arguments: CloudKitDocumentedCases.all)
    func documentedVerdict(_ entry: DocumentedCase) throws {
        let (predicate, validation) = try Self.validate(entry, recordType: entry.recordType)
        switch entry.verdict {
        case .accepted(let comparators):
            #expect(validation.isAccepted, "\(entry.reason): \(validation.reasons)")
            if let comparators {
                let filters = try predicate.cloudKitFilterBy().arrayValue ?? []
                #expect(filters.map { $0["comparator"]?.stringValue ?? "?" } == comparators, "\(filters)")
            }
        case .rejected(let rule, let column):
            let first = try #require(validation.reasons.first, "\(entry.reason): expected \(rule)")
            #expect(first.rule == rule, "\(entry.reason): \(validation.reasons)")
            #expect(first.span.column == column, "\(first)")
            #expect(first.description.hasSuffix("[\(rule.rawValue)]"))
            if column > 0 {
                #expect(first.description.hasPrefix("1:\(column): "), "\(first)")
            }
        }
        if let warning = entry.warning {
            #expect(validation.warnings.contains { $0.rule == warning }, "\(validation.warnings)")
        }
    }

    @Test("Every accepted documented case is also accepted against a schema that indexes its fields",
          arguments: CloudKitDocumentedCases.all.filter {
              if case .accepted = $0.verdict, $0.recordType == nil { true } else { false }
          })
    func acceptedWithSchema(_ entry: DocumentedCase) throws {
        let (_, validation) = try Self.validate(entry, recordType: "Person")
        #expect(validation.isAccepted, "\(validation.reasons)")
    }
}
