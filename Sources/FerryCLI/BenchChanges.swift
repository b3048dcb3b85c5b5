import ArgumentParser
import FerryChangeLog
import FerryCompression
import FerryIO

/// `ferry bench-changes IN OUT` (hidden): converts the shared benchmark's change events to Ferry's
/// change-log format, untimed, before the replay benchmark times `ferry replay` on them.
struct BenchChanges: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-changes",
        abstract: "Convert ../shared/bench change events ({token, op, record}) to Ferry's change-log format.",
        discussion: """
        For the replay benchmark (Benchmarks/Sources/FerryBench/Tasks/Replay.swift). Upserts and
        modifications become recordSaved, deletions recordDeleted; every N events each zone touched
        gets a checkpoint with token <zoneName>@<last input token>.
        """,
        shouldDisplay: false
    )

    @Argument(help: "The benchmark's change events (- is stdin; gzip recognized).")
    var input: String

    @Argument(help: "Ferry change-log NDJSON to write (- is stdout).")
    var output: String

    @Option(help: "Events between checkpoints.")
    var checkpointEvery = 1000

    func validate() throws {
        guard checkpointEvery > 0 else { throw ValidationError("--checkpoint-every expects a positive number") }
    }

    func run() throws {
        let file = try OutputFile(path: output)
        do {
            let source = try Compression.openInput(try InputFile(path: input))
            try BenchChangeConverter.convert(from: source, to: ChangeLogWriter(sink: file), checkpointEvery: checkpointEvery)
        } catch {
            file.abandon()
            throw dataFailure(error)
        }
    }
}
