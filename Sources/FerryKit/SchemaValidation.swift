import FerryCompression
import FerryIO
import FerryInternals
import FerryRecords
import FerryXML

/// XML files checked against Ferry's XML Schema, as `ferry validate` checks them: each read
/// streaming (gzip recognized), with the reader's protections, every violation reported with
/// its line and column.
public struct SchemaValidation {
    private let validator: XMLSchemaValidator

    /// A validation reporting at most `maximumViolations` violations per file.
    ///
    /// - Throws: ``FerryError`` when the built-in schema cannot be loaded.
    public init(maximumViolations: Int = 1_000) throws(FerryError) {
        do {
            validator = try XMLSchemaValidator(configuration: .init(maximumViolations: maximumViolations))
        } catch {
            throw .data(error.description, underlying: error)
        }
    }

    /// Checks the file at `path` (`-` is standard input). A file that cannot be read is an
    /// invalid result, not an error.
    public func validate(_ path: String) -> SchemaValidationResult {
        do {
            let source = try Compression.openInput(try InputFile(path: path))
            return SchemaValidationResult(path: path, report: try validator.validate(source), error: nil)
        } catch {
            return SchemaValidationResult(path: path, report: nil, error: String(describing: error))
        }
    }

    /// The line `ferry validate` ends with: files, invalid ones, violations.
    public static func summaryLine(_ results: [SchemaValidationResult]) -> String {
        let invalid = results.filter { !$0.isValid }.count
        let violations = results.reduce(0) { $0 + $1.violationCount }
        return "\(Plural.count(results.count, "file")), \(invalid) invalid, \(Plural.count(violations, "violation"))"
    }

    /// The results as one JSON object (`ferry validate --json`): valid, files.
    public static func json(_ results: [SchemaValidationResult]) -> String {
        JSONValue.object(["valid": .bool(results.allSatisfy(\.isValid)), "files": .array(results.map(\.json))]).compactText
    }
}

/// What ``SchemaValidation/validate(_:)`` found in one file.
public struct SchemaValidationResult: Sendable {
    /// The file.
    public var path: String
    /// The validator's report, when the file could be read.
    public var report: XMLSchemaValidator.Report?
    /// Why the file could not be read at all (I/O, gzip).
    public var error: String?

    /// Whether the file is valid.
    public var isValid: Bool { report?.isValid ?? false }

    /// Violations found, those not listed included.
    public var violationCount: Int { report.map { $0.violations.count + $0.omittedCount } ?? 0 }

    /// The violations as compilers print them (`FILE:LINE:COLUMN: message`), then how many more
    /// were not listed.
    public var diagnostics: [String] {
        guard let report else { return [] }
        return report.violations.map(\.description)
            + (report.omittedCount > 0 ? ["\(path): \(report.omittedCount) more violations not shown (--max-violations)"] : [])
    }

    /// The file's entry in ``SchemaValidation/json(_:)``.
    public var json: JSONValue {
        var entry = JSONObject()
        entry.append(key: "path", value: .string(path))
        guard let report else {
            entry.append(key: "valid", value: .bool(false))
            entry.append(key: "error", value: .string(error ?? ""))
            return .object(entry)
        }
        entry.append(key: "valid", value: .bool(report.isValid))
        entry.append(key: "elements", value: report.elementCount.json)
        entry.append(key: "violations", value: .array(report.violations.map { violation in
            var object = JSONObject()
            object.append(key: "line", value: violation.line.json)
            object.append(key: "column", value: violation.column.map(\.json) ?? .null)
            object.append(key: "code", value: .string(violation.code.rawValue))
            object.append(key: "message", value: .string(violation.message))
            return .object(object)
        }))
        entry.append(key: "omitted", value: report.omittedCount.json)
        return .object(entry)
    }
}
