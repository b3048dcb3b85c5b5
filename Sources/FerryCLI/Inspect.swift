import ArgumentParser
import FerryKit

/// `ferry inspect INPUT...`: what a dataset holds.
struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show what records a dataset holds: zones, types, fields, time span, size.",
        discussion: """
        Counts records per zone and type, lists every field with the types it was seen with and how \
        often it occurs, the time span of created and modified, and the bytes read. Inputs may be \
        NDJSON, XML or gzip-compressed; for an archive, its manifest is shown (zones, counts, \
        change tokens, schema, members) without reading its records — `ferry verify` checks them. \
        For a store: its zones, change tokens, counts per type, journal and indexes.

        Examples:
          ferry inspect Samples/chat.ndjson
          ferry inspect export.xml.gz
          ferry inspect backup.tar.gz            # an archive: what its manifest says
          ferry inspect export.ndjson --json \\
              | jq '.fields[] | select(.types | length > 1)'
        """
    )

    @Argument(help: ArgumentHelp("Files or folders to inspect (- is stdin).", valueName: "INPUT"))
    var inputs: [String] = []

    @Flag(help: "Print the report as JSON on stdout.")
    var json = false

    @Option(name: .customLong("on-error"), help: "fail: stop at the first bad input (default). skip: count it and go on.")
    var onError: ErrorMode = .fail

    @Flag(help: "No progress, and with --on-error skip no skipped inputs, on stderr.")
    var quiet = false

    func validate() throws {

        guard Ferry.validatesOptions else { return }
        guard !inputs.isEmpty else { throw ValidationError("expected at least one INPUT") }
        try checkInputsExist(inputs)
    }

    func run() throws {
        let inspection = Inspection(configuration: .init(inputs: inputs, skipsBadInput: onError == .skip))
        let progress = Progress(enabled: !quiet && StandardError.isTerminal)
        defer { progress.clear() }
        if !quiet { inspection.onNote = note }
        let skipped = SkippedInputNotes()
        inspection.onReject = { [quiet] error in
            progress.clear()
            if !quiet, let text = skipped.note(for: error) { note(text) }
        }
        if progress.isEnabled {
            let clock = Stopwatch()
            inspection.onProgress = { progress.update(records: $0.recordsIn, bytes: $0.bytesIn, clock: clock) }
        }
        let report = try inspection.run()
        progress.clear()
        print(json ? report.json : report.text, terminator: "")
    }
}
