import ArgumentParser
import FerryKit

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
        let validation = try SchemaValidation(maximumViolations: maxViolations)
        var results: [SchemaValidationResult] = []
        let paths = FileReadahead(files)
        while let path = paths.next() {
            let result = validation.validate(path)
            if !quiet {
                for diagnostic in result.diagnostics { StandardError.write(diagnostic + "\n") }
                if let error = result.error { note(error) }
            }
            results.append(result)
        }
        if json { print(SchemaValidation.json(results)) }
        if !quiet { note(SchemaValidation.summaryLine(results)) }
        if results.contains(where: { !$0.isValid }) { throw CommandFailure(message: "", exitCode: 1) }
    }
}
