import ArgumentParser
import FerryArchive
import FerryChangeLog
import FerryCompression
import FerryIO
import FerryInternals
import FerryPipeline
import FerryRecords
import FerryStore

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
            try files.check()
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
            let format = try outputFormat(of: out, declared: to?.format)
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
        try files.check()
    }

    /// What the run reads and writes: histories, the base and its tokens; the state, its tokens,
    /// the report and the log, or the store.
    private var files: RunFiles {
        get throws {
            var files = RunFiles(inputs: histories.map { .init(role: "HISTORY", path: $0) })
            if let base, base != "-" {
                files.inputs += [.init(role: "--base", path: base), .init(role: "--base's tokens file", path: ReplayTokens.sidecarPath(for: base))]
            }
            if let out {
                files.output = .init(role: "--out", path: out)
                let format = try outputFormat(of: out, declared: to?.format)
                files.outputIsWrittenInPlace = format == .store
                if out != "-" && format != .archive {
                    files.sideOutputs.append(.init(role: "--out's tokens file", path: ReplayTokens.sidecarPath(for: out)))
                }
            }
            if let into { files.sideOutputs.append(.init(role: "--into", path: into)) }
            if let report { files.sideOutputs.append(.init(role: "--report", path: report)) }
            if let log { files.sideOutputs.append(.init(role: "--log", path: log)) }
            return files
        }
    }

    func run() throws {
        if let into { return try replayIntoStore(into) }
        let clock = Stopwatch()
        let progress = ReplayProgress(enabled: !quiet && StandardError.isTerminal, clock: clock)
        var output: RecordOutput?
        var logFile: OutputFile?
        var reportFile: OutputFile?
        do {
            if let out { output = try openRecordOutput(out, options: RecordOutputOptions(format: to?.format, database: database ?? "private")) }
            if let report { reportFile = try OutputFile(path: report) }
            let baseState = try loadBase()
            // Without --since, a base written by Ferry continues from its last checkpoint.
            let implicitSince = base != nil && since == nil ? baseState.tokens.lastCheckpoint?.syncToken : nil
            let paths = try expandInputs(histories, quiet: quiet)
            var logWriter: ChangeLogWriter?
            func attempt(since: String?, base: ReplayState, notes: Bool = true) throws -> Replayer {
                var configuration = try configuration()
                if let since { configuration.since = since }
                let replayer = Replayer(configuration: configuration, base: base)
                logFile?.abandon()
                if let log {
                    let file = try OutputFile(path: log)
                    logFile = file
                    let writer = ChangeLogWriter(sink: RecordFormat.impliesGzip(log) ? try GzipSink(wrapping: file) : file)
                    replayer.onApply = { try writer.write($0) }
                    logWriter = writer
                }
                replayer.onProgress = { progress.update(events: $0.eventCount, bytes: $0.bytesRead) }
                let sources = HistorySources(paths)
                if !quiet && notes { sources.onNote = { StandardError.write("ferry: \($0)\n") } }
                try replayer.apply(sources: { try sources.next() })
                return replayer
            }
            var replayer = try attempt(since: implicitSince, base: baseState)
            // Only files can be read again: not standard input, a pipe or a FIFO (`<(cat h)`).
            let readableAgain = paths.allSatisfy { $0 != "-" && Syscall.isRegularFile($0) == true }
            if let implicitSince, !replayer.reachedSince, readableAgain {
                // The history does not go back to the base (the next file of a series, not the
                // whole log again): all of it follows the base. Read again from the start, as
                // what was read was skipped while looking for the token.
                if !quiet {
                    progress.clear()
                    StandardError.write("ferry: the history holds no checkpoint with --base's last token \"\(implicitSince)\": "
                                        + "all of it is applied after the base\n")
                }
                replayer = try attempt(since: nil, base: try loadBase(), notes: false)
            } else if let implicitSince, !replayer.reachedSince {
                throw CommandFailure(message: "the history holds no checkpoint with --base's last token \"\(implicitSince)\", and it "
                                     + "cannot be read again to apply all of it (standard input or a pipe): give it as a file, or give --since")
            }
            let applied = clock.seconds
            if tokensOnly {
                try replayer.finish()
                progress.clear()
                print(json ? Self.tokensJSON(replayer.tokens) : Self.text(of: replayer.tokens), terminator: "")
                return
            }
            progress.clear()
            if logWriter == nil && reportFile == nil {
                // The state is written while the reference check runs beside it.
                try replayer.finish { state in
                    if let output, let out { try write(state, to: output, path: out) }
                }
            } else {
                // The side outputs are written out before the state is committed, so that one
                // that cannot be written (a full disk) fails the run with no state written, and
                // committed after it, so that a state that cannot be written leaves none of them.
                // So the replay ends first: its last batch logged, its references checked.
                try replayer.finish()
                try logWriter?.flush()
                try logFile?.flush()
                if let reportFile {
                    try reportFile.write(replayer.anomalies.json() + "\n")
                    try reportFile.flush()
                }
                if let output, let out { try write(replayer.state, to: output, path: out) }
            }
            try logWriter?.finish()
            try reportFile?.commit()
            let seconds = clock.seconds
            summarize(replayer, seconds: seconds, phases: [("history", applied), ("checkAndWrite", seconds - applied)])
            // Everything is committed: the state's mappings and blocks are left to the exit.
            ProcessMemory.leaveForExit(replayer)
        } catch {
            progress.clear()
            output?.abandon()
            logFile?.abandon()
            reportFile?.abandon()
            throw dataFailure(error)
        }
    }

    /// `--into STORE`: the history applied to a store, after each zone's stored token.
    private func replayIntoStore(_ path: String) throws {
        let clock = Stopwatch()
        let progress = ReplayProgress(enabled: !quiet && StandardError.isTerminal, clock: clock)
        var reader = ChangeLogReader.Configuration(maximumLineBytes: maxLineBytes)
        if let zone { reader.defaultZone = ZoneID(zoneName: zone) }
        var reportFile: OutputFile?
        do {
            if let report { reportFile = try OutputFile(path: report) }
            let replayer = try StoreReplayer(path: path, configuration: .init(
                database: database ?? "private", cascade: cascade, transaction: transaction ?? .run, busyTimeout: busyTimeout ?? 5,
                reader: reader))
            replayer.onProgress = { progress.update(events: $0.eventCount, bytes: $0.bytesRead) }
            // Files are decoded on several threads; an archive's members are read in order from its stream.
            var files: [String] = []
            func applyFiles() throws {
                guard !files.isEmpty else { return }
                try replayer.apply(files: files, threads: threads) { try openHistoryFile($0) }
                files = []
            }
            for path in try expandInputs(histories, quiet: quiet) {
                if path != "-", try !isArchiveFile(path) {
                    files.append(path)
                    continue
                }
                try applyFiles()
                switch try openHistory(path) {
                case .file(let source):
                    try replayer.apply(source)
                case .archive(let archive):
                    while let member = try archive.nextHistoryMember() { try replayer.apply(member.source) }
                }
            }
            try applyFiles()
            try replayer.finish()
            progress.clear()
            if let reportFile {
                try reportFile.write(replayer.anomalies.json() + "\n")
                try reportFile.commit()
            }
            summarize(replayer, seconds: clock.seconds)
        } catch {
            progress.clear()
            reportFile?.abandon()
            throw dataFailure(error)
        }
    }

    /// The formats `--to` names: those of a state file. A store is accepted here only to be
    /// refused with a pointer to `--into`, and so is not listed.
    enum StateFormat: String, CaseIterable, ExpressibleByArgument {
        case ndjson, xml, archive, store

        static var allValueStrings: [String] { [ndjson, xml, archive].map(\.rawValue) }

        var format: RecordFormat { RecordFormat(rawValue: rawValue)! }
    }

    private func summarize(_ replayer: StoreReplayer, seconds: Double) {
        let anomalies = replayer.anomalies
        if !quiet && anomalies.total > 0 {
            let counts = ReplayAnomaly.Kind.allCases.filter { anomalies.count(of: $0) > 0 }
                .map { "\($0.rawValue) \(anomalies.count(of: $0))" }.joined(separator: ", ")
            StandardError.write("ferry: \(anomalies.total) anomal\(anomalies.total == 1 ? "y" : "ies"): \(counts)"
                                + (report == nil ? " (list them with --report FILE)" : "") + "\n")
        }
        let s = replayer.statistics
        if json {
            let object: JSONObject = [
                "events": .number(JSONNumber(Int64(replayer.eventCount))),
                "applied": .number(JSONNumber(Int64(replayer.appliedCount))),
                "skipped": .number(JSONNumber(Int64(replayer.skippedCount))),
                "created": .number(JSONNumber(Int64(s.created))), "modified": .number(JSONNumber(Int64(s.modified))),
                "unchanged": .number(JSONNumber(Int64(s.unchanged))), "deleted": .number(JSONNumber(Int64(s.deleted))),
                "anomalies": .number(JSONNumber(Int64(anomalies.total))),
                "token": .string(replayer.token?.description ?? ""),
                "seconds": .number(JSONNumber(text: format(seconds, 3))),
            ]
            var text = JSONOutput()
            text.appendValue(.object(object))
            print(String(decoding: text.bytes, as: UTF8.self))
            return
        }
        guard !quiet else { return }
        StandardError.write("ferry: \(Plural.count(replayer.eventCount, "event")), \(replayer.appliedCount) applied, \(replayer.skippedCount) already in the store; "
                            + "\(s.created) created, \(s.modified) modified, \(s.deleted) deleted; \(format(seconds, 2)) s; token \(replayer.token?.description ?? "-")\n")
    }

    private func configuration() throws -> Replayer.Configuration {
        var reader = ChangeLogReader.Configuration(maximumLineBytes: maxLineBytes)
        if let zone { reader.defaultZone = ZoneID(zoneName: zone) }
        return Replayer.Configuration(until: until, since: since, tokensOnly: tokensOnly, cascade: cascade, ordersBatches: order,
                                      reader: reader, decodingThreads: threads)
    }

    /// The base state with its tokens: from the archive's manifest, or from STATE.tokens.json.
    private func loadBase() throws -> ReplayState {
        guard let base else { return ReplayState() }
        let reader = try openRecordReader(base, options: RecordInputOptions(maximumLineBytes: maxLineBytes))
        var tokens: ReplayTokens?
        if let archive = reader as? ArchiveRecordReader {
            tokens = ReplayTokens(zones: archive.archive.manifest.zones.compactMap { zone in
                zone.changeToken.map { ReplayTokens.ZoneToken(zoneID: zone.zoneID, syncToken: $0) }
            })
        } else if base != "-", FileSystem.exists(ReplayTokens.sidecarPath(for: base)) {
            tokens = try ReplayTokens(contentsOfFile: ReplayTokens.sidecarPath(for: base))
        }
        let state = try ReplayState(loading: reader, tokens: tokens)
        if since == nil && state.tokens.lastCheckpoint == nil {
            if reader is ArchiveRecordReader {
                throw ValidationError("--base \(base) is an archive, whose manifest keeps each zone's token but not the last "
                                      + "checkpoint: give --since TOKEN")
            }
            throw ValidationError("--base \(base) comes with no tokens file naming its last checkpoint "
                                  + "(\(ReplayTokens.sidecarPath(for: base))): give --since TOKEN")
        }
        return state
    }

    /// Writes the state, and its tokens into the archive's manifest or beside the state.
    private func write(_ state: ReplayState, to output: RecordOutput, path: String) throws {
        let stateOrder: ReplayState.OutputOrder = order ? .dependencies : .byName
        let tokens = state.tokens
        if let archive = output.archive {
            for zone in tokens.zones where !zone.isDeleted {
                try archive.archive.addZone(zone.zoneID, database: database ?? "private")
                if let token = zone.syncToken { try archive.archive.setChangeToken(token, for: zone.zoneID, database: database ?? "private") }
            }
            try state.write(to: output.writer, order: stateOrder)
            return
        }
        // A stream (standard output, a device or pipe such as /dev/null) has no place beside it for tokens.
        guard path != "-" && !Syscall.isSpecialFile(path) else {
            try state.write(to: output.writer, order: stateOrder)
            return
        }
        // The tokens are staged first and renamed last; an old tokens file goes before the state
        // is renamed, so no tokens file ever describes another state.
        let sidecar = ReplayTokens.sidecarPath(for: path)
        let tokensFile = try OutputFile(path: sidecar)
        do {
            try tokensFile.write(tokens.json())
            try state.write(to: output.writer, order: stateOrder) {
                if FileSystem.exists(sidecar) { try FileSystem.remove(sidecar) }
            }
            try tokensFile.commit()
        } catch {
            tokensFile.abandon()
            throw error
        }
    }

    private func summarize(_ replayer: Replayer, seconds: Double, phases: [(String, Double)]) {
        let state = replayer.state
        let anomalies = replayer.anomalies
        let eventsPerSecond = seconds > 0 ? Double(replayer.eventCount) / seconds : 0
        if !quiet && anomalies.total > 0 {
            let counts = ReplayAnomaly.Kind.allCases.filter { anomalies.count(of: $0) > 0 }
                .map { "\($0.rawValue) \(anomalies.count(of: $0))" }.joined(separator: ", ")
            StandardError.write("ferry: \(anomalies.total) anomal\(anomalies.total == 1 ? "y" : "ies"): \(counts)"
                                + (report == nil ? " (list them with --report FILE)" : "") + "\n")
        }
        if json {
            var counts = JSONObject()
            for kind in ReplayAnomaly.Kind.allCases where anomalies.count(of: kind) > 0 {
                counts.append(key: kind.rawValue, value: .number(JSONNumber(Int64(anomalies.count(of: kind)))))
            }
            var object: JSONObject = [
                "events": .number(JSONNumber(Int64(replayer.eventCount))),
                "applied": .number(JSONNumber(Int64(replayer.appliedCount))),
                "records": .number(JSONNumber(Int64(state.recordCount))),
                "zones": .number(JSONNumber(Int64(state.zoneIDs.count))),
                "anomalies": .number(JSONNumber(Int64(anomalies.total))),
                "anomalyCounts": .object(counts),
                "bytesIn": .number(JSONNumber(Int64(replayer.bytesRead))),
                "seconds": .number(JSONNumber(text: format(seconds, 3))),
                "phaseSeconds": .object(JSONObject(phases.map { .init(key: $0.0, value: .number(JSONNumber(text: format($0.1, 3)))) })),
                "eventsPerSecond": .number(JSONNumber(text: format(eventsPerSecond, 0))),
            ]
            if let last = state.tokens.lastCheckpoint { object.append(key: "lastToken", value: .string(last.syncToken)) }
            var text = JSONOutput()
            text.appendValue(.object(object))
            writeSummary(String(decoding: text.bytes, as: UTF8.self), outputIsStdout: out == "-")
            return
        }
        guard !quiet else { return }
        StandardError.write("ferry: \(Plural.count(replayer.eventCount, "event")), \(replayer.appliedCount) applied, \(Plural.count(state.recordCount, "record")) in "
                            + "\(Plural.count(state.zoneIDs.count, "zone")), \(format(seconds, 2)) s, \(format(eventsPerSecond, 0)) events/s\n")
    }

    /// The tokens as `--tokens-only --json` prints them (no record count: records were not read).
    static func tokensJSON(_ tokens: ReplayTokens) -> String {
        var tokens = tokens
        tokens.recordCount = nil
        return tokens.json()
    }

    /// One line per zone: name, owner, token, and flags, tab-separated; `-` for what is absent.
    static func text(of tokens: ReplayTokens) -> String {
        var text = ""
        for zone in tokens.zones {
            var line = [zone.zoneID.zoneName, zone.zoneID.ownerRecordName ?? "-", zone.syncToken ?? "-"]
            if zone.isDeleted { line.append("deleted") }
            if zone.moreComing { line.append("moreComing") }
            text += line.joined(separator: "\t") + "\n"
        }
        if let database = tokens.database {
            text += ["(database)", "-", database.syncToken].joined(separator: "\t") + (database.moreComing ? "\tmoreComing\n" : "\n")
        }
        return text
    }
}

/// Progress of a replay on stderr (only on a terminal), at most a few times a second.
final class ReplayProgress {
    private let enabled: Bool
    private let clock: Stopwatch
    private var last = 0.0
    private var shown = false

    init(enabled: Bool, clock: Stopwatch) {
        self.enabled = enabled
        self.clock = clock
    }

    func update(events: Int, bytes: Int) {
        guard enabled else { return }
        let now = clock.seconds
        guard now - last >= 0.25 else { return }
        last = now
        shown = true
        StandardError.write("\r\u{1B}[K\(events) events, \(format(Double(bytes) / 1e6, 1)) MB, "
                            + "\(format(Double(events) / max(now, 1e-9), 0)) events/s")
    }

    func clear() {
        if shown { StandardError.write("\r\u{1B}[K") }
        shown = false
    }
}
