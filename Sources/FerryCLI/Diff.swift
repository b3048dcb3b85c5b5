import ArgumentParser
import FerryKit

/// `ferry diff A B`: which records two states or exports do not share, and which changed.
struct Diff: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compare two states or exports: records only in A, only in B, and changed.",
        discussion: """
        A and B are anything Ferry reads: NDJSON (gzip recognized), saved CloudKit responses, \
        archives, stores, XML, and folders of them (their files in name order, as convert reads \
        them). Records are matched by zone (name and owner) and recordName and compared as JSON \
        values: key order does not matter, numbers compare by their exact value (an integer and a \
        fraction differ). For each changed record the \
        fields and system keys that differ are named. An input that holds a record (zone and \
        recordName, and database in a store or archive) more than once is not a state: diff names \
        such records and where they are, and exits 2 without comparing. A record of an input that \
        does not tell databases apart (NDJSON, XML, responses) matches the other input's record of \
        that zone and name in any database (exit 2 when the other holds it in several); the \
        differences name the database where one is known.

        Memory is proportional to the records of A (held as compact JSON); B is streamed.

        Exit codes (as diff(1)): 0 identical, 1 different, 2 usage error, unreadable input (a \
        record given twice included) or a failed write to standard output.

        Examples:
          ferry diff state.ndjson snapshot.ndjson
          ferry diff replayed.tar.gz export.ndjson.gz --json | jq '.changed[].fields'
          ferry replay history.ndjson --out s.ndjson --quiet \\
              && ferry diff s.ndjson expected.ndjson --quiet
        """
    )

    @Argument(help: ArgumentHelp("The first state or export (- is stdin).", valueName: "A"))
    var a: String

    @Argument(help: ArgumentHelp("The second state or export (- is stdin).", valueName: "B"))
    var b: String

    @Flag(help: "Print the differences as JSON on stdout.")
    var json = false

    @Flag(help: "Print nothing, not even with --json; only the exit code tells.")
    var quiet = false

    @Option(name: .customLong("max-line-bytes"), parsing: .unconditional, help: "Longest input line accepted (also the largest pretty-printed document read from stdin or gzip).")
    var maxLineBytes: Int = 64 << 20

    func validate() throws {

        guard Ferry.validatesOptions else { return }
        if a == "-" && b == "-" { throw ValidationError("standard input (-) can be read only once") }
        for path in [a, b] where path != "-" && !FileSystem.exists(path) {
            throw ValidationError("no such input: \(path)")
        }
        try checkNumber(maxLineBytes, of: "--max-line-bytes", in: 1...Int.max)
    }

    func run() throws {
        let comparison = Comparison(configuration: .init(a: a, b: b, maximumLineBytes: maxLineBytes))
        if !quiet && !json { comparison.onNote = note }
        let diff: StateDiff
        do {
            diff = try comparison.run()
        } catch {
            // diff exits as diff(1) does: 2 for trouble.
            guard error.kind == .data else { throw error }
            throw CommandFailure(message: error.message, exitCode: 2)
        }
        if quiet {
            // Nothing, not even with --json: only the exit code tells.
        } else if json {
            print(Comparison.json(diff))
        } else {
            print(Comparison.text(diff), terminator: "")
        }
        if !diff.isIdentical { throw CommandFailure(message: "", exitCode: 1) }
    }
}
