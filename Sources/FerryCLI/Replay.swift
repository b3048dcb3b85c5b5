import ArgumentParser
import FerryIO
import FerryKit
import FerryPipeline

/// `ferry replay HISTORY... --out STATE`: rebuild the state of every zone from a history.
struct Replay: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Rebuild the state of every zone from a change history, to any point in time.",
        discussion: """
        HISTORY is Ferry change-log NDJSON (Docs/ChangeLogFormat.md) or saved CloudKit change \
        responses (records/changes, changes/zone, changes/database, zones/changes), one per line or \
        pretty-printed: files, folders of response files (every file under them, subfolders \
        included, in name order; hidden entries skipped and counted on stderr), or - for stdin; \
        gzip is recognized by content. An archive (.tar.gz, .tar; recognized by content) is read as \
        the history it holds: in one Ferry wrote, its change logs (a state without any is refused: \
        give it as --base); in a tar of saved pages (tar --sort=name -czf pages.tar.gz pages/), \
        its .json, .ndjson and .jsonl members (each optionally .gz; other members, which a folder's \
        reading would try, are skipped and named on stderr), which must come in the order a folder \
        is read in. Change tokens are opaque: order comes from the history.

        A save replaces a record, a delete removes it, deleting or purging a zone removes its \
        records; replaying a history twice gives the same state (Docs/ReplaySemantics.md). \
        Memory is proportional to the live state, not to the history; a history file (not \
        compressed, up to a quarter of memory) is read in place, its records' JSON left in the page \
        cache: do not truncate or rewrite it while the replay runs (Ferry notices, best effort, \
        and fails without writing STATE; appending to it, or replacing it by renaming, is safe).

        STATE is any output Ferry writes but a store: NDJSON (.ndjson, .ndjson.gz), XML or an archive \
        (.tar.gz); a name whose extension Ferry does not know needs --to; a store is filled with \
        --into. \
        Zone tokens go into the archive's manifest, or beside other outputs in STATE.tokens.json. \
        --report, --log, STATE.tokens.json and --into must each name a file of its own, not a \
        HISTORY, the base, STATE or one another (exit 2). \
        STATE and its tokens are written to temporary files and renamed into place at the end: an \
        interrupted replay leaves no partial output, and running it again succeeds.

        --into STORE replays into a store instead (made when missing), incrementally: each zone \
        continues after the last checkpoint the store applied to it, so replaying a history again \
        changes nothing and a later history applies what is new. One transaction covers the run \
        (--transaction checkpoint commits at each checkpoint instead, its token with it; it and \
        --busy-timeout need --into), so a \
        killed run leaves the store as it was (or at a checkpoint), and rerunning completes it.

        Anomalies (deletes of unknown records, unchanged change tags, modification times going \
        backwards, dangling parents and references, tokens seen twice, events for deleted zones, \
        reference cycles with --order, server errors) are counted on stderr and listed with \
        --report. Exit codes: 0 success (anomalies included), 1 data error, 2 usage error.

        Examples:
          ferry replay history.ndjson --out state.ndjson
          ferry replay responses/ --out state.tar.gz --report anomalies.json
          ferry replay history.ndjson.gz --until AQAAAB8= --out then.ndjson
          ferry replay history.ndjson --base then.ndjson --since AQAAAB8= \\
              --out now.ndjson
          ferry replay new.ndjson --base now.ndjson --out later.ndjson
          ferry replay history.ndjson --tokens-only --json
          cat pages.ndjson | ferry replay - --out - --quiet | ferry inspect -
          ferry replay responses/ --into chat.sqlite
          ferry replay pages.tar.gz --out state.ndjson
        """
    )

    @Argument(help: ArgumentHelp("History files or folders, in fetch order (- is stdin).", valueName: "HISTORY"))
    var histories: [String] = []

    @Option(help: ArgumentHelp("Where to write the state (- is stdout): NDJSON, .gz, or an archive .tar.gz.", valueName: "STATE"))
    var out: String?

    @Option(help: ArgumentHelp("Replay into this store (made when missing), after each zone's stored token.", valueName: "STORE"))
    var into: String?

    @Option(help: ArgumentHelp("With --into: what one transaction covers: run (default) or checkpoint.", valueName: "UNIT"))
    var transaction: StoreReplayer.Configuration.TransactionUnit?

    @Option(name: .customLong("busy-timeout"), parsing: .unconditional,
            help: "With --into: seconds to wait for another process writing to the store (default 5; at most 2147483, about 24 days).")
    var busyTimeout: Double?

    @Option(help: ArgumentHelp("Stop at the checkpoint carrying this token: the state exactly then.", valueName: "TOKEN"))
    var until: String?

    @Option(help: ArgumentHelp("Apply only what follows the checkpoint carrying this token, on top of --base.", valueName: "TOKEN"))
    var since: String?

    @Option(help: ArgumentHelp("An earlier state (any format Ferry reads) to apply the history on; its tokens give --since.", valueName: "STATE"))
    var base: String?

    @Flag(help: "Print the latest token of every zone without decoding records (no --out).")
    var tokensOnly = false

    @Flag(help: "Deleting a record deletes the records pointing at it with DELETE_SELF (for histories without those tombstones).")
    var cascade = false

    @Flag(help: "Apply each batch in dependency order and write STATE parents and referenced records first; report cycles.")
    var order = false

    @Option(help: ArgumentHelp("Write the anomalies as JSON here.", valueName: "FILE"))
    var report: String?

    @Option(help: ArgumentHelp("Also write the changes as applied, in Ferry's change-log format.", valueName: "FILE"))
    var log: String?

    @Option(help: ArgumentHelp("The zone of responses and records that name none (default _defaultZone).", valueName: "NAME"))
    var zone: String?

    @Option(help: "Format of STATE, when the extension doesn't say.")
    var to: StateFormat?

    @Option(help: ArgumentHelp("With an archive STATE or --into: the database of the zones, public, private (default) or shared.", valueName: "NAME"))
    var database: String?

    @Option(parsing: .unconditional, help: "Threads decoding the history, 0–256 (default: one more than the cores this process may use, at most 4; 0 decodes on the main thread).")
    var threads: Int?

    @Flag(help: "Print the summary (or, with --tokens-only, the tokens) as JSON.")
    var json = false

    @Flag(help: "No summary, anomaly counts or progress on stderr.")
    var quiet = false

    @Option(name: .customLong("max-line-bytes"), parsing: .unconditional, help: "Longest history line accepted (also the largest pretty-printed response read from stdin or gzip).")
    var maxLineBytes: Int = 64 << 20

    func validate() throws {

        guard Ferry.validatesOptions else { return }
        guard !histories.isEmpty else { throw ValidationError("expected at least one HISTORY") }
        try checkNumber(maxLineBytes, of: "--max-line-bytes", in: 1...Int.max)
        try checkThreads(threads, minimum: 0)
        if let busyTimeout { try checkBusyTimeout(busyTimeout) }
        if histories.filter({ $0 == "-" }).count > 1 { throw ValidationError("standard input (-) can be read only once") }
        for input in histories where input != "-" && !FileSystem.exists(input) && !FileSystem.isDirectory(input) {
            throw ValidationError("no such history: \(input)")
        }
        if let into {
            for (flag, used) in [("--out", out != nil), ("--until", until != nil), ("--since", since != nil), ("--base", base != nil),
                                 ("--tokens-only", tokensOnly), ("--order", order), ("--log", log != nil), ("--to", to != nil)] where used {
                throw ValidationError("--into replays into a store after its own tokens: \(flag) does not apply")
            }
            if into == "-" { throw ValidationError("--into expects a store file, found standard output (-): a store is written in place") }
            if Syscall.isSpecialFile(into) { throw ValidationError("--into expects a store file, found a device or pipe, \(into)") }
            return
        }
        for (flag, used) in [("--transaction", transaction != nil), ("--busy-timeout", busyTimeout != nil)] where used {
            throw ValidationError("\(flag) needs --into STORE: it applies to replaying into a store")
        }
        if tokensOnly {
            for (flag, used) in [("--out", out != nil), ("--base", base != nil), ("--since", since != nil), ("--cascade", cascade),
                                 ("--order", order), ("--log", log != nil), ("--report", report != nil), ("--to", to != nil),
                                 ("--database", database != nil)] where used {
                throw ValidationError("--tokens-only reads tokens only: \(flag) does not apply")
            }
        } else if let out {
            let format = try usage { () throws(FerryError) in try RecordOutput.format(of: out, declared: to?.format) }
            let found = "found \(out == "-" ? "standard output (-)" : out) (\(format.rawValue))"
            if format == .store {
                throw ValidationError("--out writes a state file (ndjson, xml or archive), \(found): replay into a store with --into STORE")
            }
            if database != nil && format != .archive {
                throw ValidationError("--database needs an archive STATE (a name ending in .tar.gz, or --to archive) or --into STORE, \(found)")
            }
        } else {
            throw ValidationError("expected --out STATE (or --tokens-only)")
        }
        if since != nil && base == nil { throw ValidationError("--since needs --base, the state at that checkpoint") }
        if let since, since == until { throw ValidationError("--until must name a checkpoint after --since") }
        if let base, base != "-", !FileSystem.exists(base) { throw ValidationError("no such base state: \(base)") }
        if base == "-" && histories.contains("-") { throw ValidationError("standard input (-) can be read only once") }
        if let out, out == base { throw ValidationError("--out must differ from --base (the base is read while the state is written)") }
        // The files the run reads and writes are checked by FerryKit as the run starts.
    }

    func run() throws {
        let progress = ReplayProgress(enabled: !quiet && StandardError.isTerminal, clock: Stopwatch())
        defer { progress.clear() }
        if let into {
            let replay = StoreReplay(configuration: .init(
                histories: histories, store: into, database: database ?? "private", cascade: cascade, transaction: transaction ?? .run,
                busyTimeout: busyTimeout ?? 5, report: report, defaultZone: zone, threads: threads, maximumLineBytes: maxLineBytes))
            if !quiet { replay.onNote = note }
            if progress.isEnabled { replay.onProgress = progress.update }
            let summary = try replay.run()
            progress.clear()
            return summarize(summary.anomalies, line: summary.line, json: summary.json, jsonOnStderr: false)
        }
        let replay = StateReplay(configuration: .init(
            histories: histories, output: out, format: to?.format, database: database ?? "private", until: until, since: since, base: base,
            tokensOnly: tokensOnly, cascade: cascade, ordersBatches: order, report: report, log: log, defaultZone: zone, threads: threads,
            maximumLineBytes: maxLineBytes))
        if !quiet { replay.onNote = { progress.clear(); note($0) } }
        if progress.isEnabled { replay.onProgress = progress.update }
        let summary = try replay.run()
        progress.clear()
        if tokensOnly { return print(json ? summary.tokensJSON : summary.tokensText, terminator: "") }
        summarize(summary.anomalies, line: summary.line, json: summary.json, jsonOnStderr: out == "-")
    }

    /// The formats `--to` names: those of a state file. A store is accepted here only to be
    /// refused with a pointer to `--into`, and so is not listed.
    enum StateFormat: String, CaseIterable, ExpressibleByArgument {
        case ndjson, xml, archive, store

        static var allValueStrings: [String] { [ndjson, xml, archive].map(\.rawValue) }

        var format: RecordFormat {
            switch self {
            case .ndjson: .ndjson
            case .xml: .xml
            case .archive: .archive
            case .store: .store
            }
        }
    }

    /// The anomalies counted on stderr, then the summary: `json` with `--json` (on stdout, or on
    /// stderr when the state goes to stdout), else `line` on stderr.
    private func summarize(_ anomalies: AnomalyReport, line: String, json text: String, jsonOnStderr: Bool) {
        if !quiet, let counted = anomalies.note(isReported: report != nil) { note(counted) }
        if json { return writeSummary(text, outputIsStdout: jsonOnStderr) }
        if !quiet { note(line) }
    }
}
