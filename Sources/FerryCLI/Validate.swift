import ArgumentParser
import FerryCompression
import FerryIO
import FerryInternals
import FerryRecords
import FerryXML

/// `ferry validate FILE...`: checks XML files against Ferry's XML Schema.
struct Validate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check XML files against Ferry's XML Schema and report every violation.",
        discussion: """
        Uses the schema shipped in Schemas/ferry-records-1.xsd (built into ferry), reads each file \
        streaming with the same protections as ferry convert (no network, no DTD, no entities), and \
        prints every violation as FILE:LINE:COLUMN: message on stderr, as compilers do. A file that \
        is not well-formed XML stops at its first error. gzip-compressed files are recognized.

        Exit codes: 0 every file is valid, 1 a file is invalid or unreadable, 2 usage error.

        The schema cannot check everything the reader does (dates agreeing with timestamps, list \
        items matching the list's type, JSON text being JSON); ferry convert reports those.

        Examples:
          ferry validate export.xml
          ferry validate a.xml b.xml.gz --json \\
              | jq '.files[] | select(.valid | not) | .path'
          ferry convert records.ndjson - --to xml | ferry validate -
        """
    )

    @Argument(help: ArgumentHelp("XML files to check (- is stdin).", valueName: "FILE"))
    var files: [String] = []

    @Flag(help: "Print the report as JSON on stdout (violations still go to stderr unless --quiet).")
    var json = false

    @Option(name: .customLong("max-violations"), parsing: .unconditional, help: "Report at most N violations per file.")
    var maxViolations: Int = 1_000

    @Flag(help: "Print nothing on stderr; the exit code (and --json) tell the result.")
    var quiet = false

    func validate() throws {

        guard Ferry.validatesOptions else { return }
        guard !files.isEmpty else { throw ValidationError("expected at least one FILE") }
        if files.filter({ $0 == "-" }).count > 1 {
            throw ValidationError("standard input (-) can be read only once")
        }
        for file in files where file != "-" && !FileSystem.exists(file) {
            throw ValidationError("no such file: \(file)")
        }
        try checkNumber(maxViolations, of: "--max-violations", in: 1...Int.max)
    }

    func run() throws {
        let validator: XMLSchemaValidator
        do {
            validator = try XMLSchemaValidator(configuration: .init(maximumViolations: maxViolations))
        } catch {
            throw CommandFailure(message: error.description)
        }
        var results: [JSONValue] = []
        var invalid = 0
        var total = 0
        let paths = FileReadahead(files)
        while let path = paths.next() {
            var entry = JSONObject()
            entry.append(key: "path", value: .string(path))
            do {
                let source = try Compression.openInput(try InputFile(path: path))
                let report = try validator.validate(source)
                if !quiet {
                    for violation in report.violations { StandardError.write("\(violation)\n") }
                    if report.omittedCount > 0 {
                        StandardError.write("\(path): \(report.omittedCount) more violations not shown (--max-violations)\n")
                    }
                }
                total += report.violations.count + report.omittedCount
                if !report.isValid { invalid += 1 }
                entry.append(key: "valid", value: .bool(report.isValid))
                entry.append(key: "elements", value: .number(JSONNumber(Int64(report.elementCount))))
                entry.append(key: "violations", value: .array(report.violations.map(Self.json)))
                entry.append(key: "omitted", value: .number(JSONNumber(Int64(report.omittedCount))))
            } catch {
                // The file could not be read at all (I/O, gzip): a data error for this file.
                invalid += 1
                let message = String(describing: error)
                if !quiet { StandardError.write("ferry: \(message)\n") }
                entry.append(key: "valid", value: .bool(false))
                entry.append(key: "error", value: .string(message))
            }
            results.append(.object(entry))
        }
        if json {
            var out = JSONOutput()
            out.appendValue(.object([
                "valid": .bool(invalid == 0),
                "files": .array(results),
            ]))
            print(String(decoding: out.bytes, as: UTF8.self))
        }
        if !quiet {
            StandardError.write("ferry: \(Plural.count(files.count, "file")), \(invalid) invalid, \(Plural.count(total, "violation"))\n")
        }
        if invalid > 0 { throw CommandFailure(message: "", exitCode: 1) }
    }

    static func json(_ violation: XMLSchemaValidator.Violation) -> JSONValue {
        var object = JSONObject()
        object.append(key: "line", value: .number(JSONNumber(Int64(violation.line))))
        object.append(key: "column", value: violation.column.map { .number(JSONNumber(Int64($0))) } ?? .null)
        object.append(key: "code", value: .string(violation.code.rawValue))
        object.append(key: "message", value: .string(violation.message))
        return .object(object)
    }
}
