import FerryArchive
import FerryChangeLog
import FerryCompression
import FerryIO
import FerryPipeline
import FerryRecords

/// One replay of change histories into a state file, as `ferry replay --out` runs it: the
/// histories (change logs, saved CloudKit change responses, archives; folders; `-`) applied in
/// order, on an earlier state (``Configuration/base``) when given, to a checkpoint
/// (``Configuration/until``) when given; the state written with its zone tokens (in an
/// archive's manifest, or beside the state in `STATE.tokens.json`).
///
/// ```swift
/// let replay = StateReplay(configuration: .init(histories: ["history.ndjson"], output: "state.ndjson"))
/// let result = try replay.run()
/// print(result.line)
/// ```
///
/// A base written by Ferry continues from its last checkpoint (an implicit `since`); when the
/// history does not reach that checkpoint (the next file of a series, not the whole log again),
/// all of it is applied after the base, the history read again from its start. The state, its
/// tokens, the report and the log appear only when the whole run succeeds.
public final class StateReplay {
    /// What to replay, and how.
    public struct Configuration: Sendable {
        /// Which histories, and how they are read.
        public var reading: HistoryReading
        /// Where the state goes (`-` is standard output); `nil` only with ``tokensOnly``.
        public var output: String?
        /// The state's format when its name does not say (a store is refused: see ``StoreReplay``).
        public var format: RecordFormat?
        /// With an archive state: the database of the zones.
        public var database: String
        /// Stop at the checkpoint carrying this token.
        public var until: String?
        /// Apply only what follows the checkpoint carrying this token, on top of ``base``.
        public var since: String?
        /// An earlier state (any format Ferry reads) to apply the history on; its tokens give ``since``.
        public var base: String?
        /// Read only the tokens: no records decoded, no state written.
        public var tokensOnly: Bool
        /// Deleting a record deletes the records pointing at it with `DELETE_SELF`.
        public var cascade: Bool
        /// Apply each batch in dependency order and write parents and referenced records first.
        public var ordersBatches: Bool
        /// Where the anomalies go, as JSON.
        public var report: String?
        /// Where the changes as applied go, as a Ferry change log.
        public var log: String?

        /// A replay of `histories` into `output`.
        public init(histories: [String], output: String?, format: RecordFormat? = nil, database: String = "private",
                    until: String? = nil, since: String? = nil, base: String? = nil, tokensOnly: Bool = false,
                    cascade: Bool = false, ordersBatches: Bool = false, report: String? = nil, log: String? = nil,
                    defaultZone: String? = nil, threads: Int? = nil, maximumLineBytes: Int = 64 << 20) {
            reading = HistoryReading(histories: histories, defaultZone: defaultZone, threads: threads, maximumLineBytes: maximumLineBytes)
            self.output = output
            self.format = format
            self.database = database
            self.until = until
            self.since = since
            self.base = base
            self.tokensOnly = tokensOnly
            self.cascade = cascade
            self.ordersBatches = ordersBatches
            self.report = report
            self.log = log
        }
    }

    /// What to replay, and how.
    public let configuration: Configuration
    /// Told what is worth saying on the way, as sentences: entries a folder's listing skipped,
    /// members an archive's reading skipped, and a history read again from its start.
    public var onNote: ((String) -> Void)?
    /// Told now and then of the events applied and the bytes read so far.
    public var onProgress: ((_ events: Int, _ bytes: Int) -> Void)?

    /// A replay as `configuration` says.
    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// The files the run reads and writes, as a command line names them (`HISTORY`, `--base`,
    /// `--out`, their tokens files, `--report`, `--log`): checked before anything is opened.
    public var files: RunFiles {
        get throws(FerryError) {
            var files = RunFiles(inputs: configuration.reading.files)
            if let base = configuration.base, base != "-" {
                files.inputs += [.init(role: "--base", path: base),
                                 .init(role: "--base's tokens file", path: ReplayTokens.sidecarPath(for: base))]
            }
            if let out = configuration.output {
                files.output = .init(role: "--out", path: out)
                let format = try RecordOutput.format(of: out, declared: configuration.format)
                files.outputIsWrittenInPlace = format.entry.isWrittenInPlace
                if out != "-" && format != .archive {
                    files.sideOutputs.append(.init(role: "--out's tokens file", path: ReplayTokens.sidecarPath(for: out)))
                }
            }
            if let report = configuration.report { files.sideOutputs.append(.init(role: "--report", path: report)) }
            if let log = configuration.log { files.sideOutputs.append(.init(role: "--log", path: log)) }
            return files
        }
    }

    /// Replays, writes the state and its side outputs, and returns what was done.
    ///
    /// - Throws: ``FerryError``: usage when the files clash, or a base comes without the
    ///   checkpoint it was written at and no ``Configuration/since``; data for bad history, a
    ///   ``Configuration/until`` never reached, and failures to read or write.
    @discardableResult
    public func run() throws(FerryError) -> Summary {
        try files.check()
        var run = Run(replay: self)
        do {
            return try run.run()
        } catch {
            run.abandon()
            throw FerryError(wrapping: error)
        }
    }
}

extension StateReplay {
    /// One run's outputs and steps.
    private struct Run {
        let replay: StateReplay
        var configuration: Configuration { replay.configuration }
        let clock = Stopwatch()
        var output: RecordOutput?
        var logFile: OutputFile?
        var logWriter: ChangeLogWriter?
        var reportFile: OutputFile?

        init(replay: StateReplay) {
            self.replay = replay
        }

        mutating func run() throws -> Summary {
            if let out = configuration.output {
                output = try RecordOutput.open(out, configuration: .init(format: configuration.format, database: configuration.database))
            }
            if let report = configuration.report { reportFile = try OutputFile(path: report) }
            let baseState = try loadBase()
            // Without `since`, a base written by Ferry continues from its last checkpoint.
            let implicitSince = configuration.base != nil && configuration.since == nil ? baseState.tokens.lastCheckpoint?.syncToken : nil
            let paths = try InputPaths.expand(configuration.reading.histories, onNote: replay.onNote)
            var replayer = try attempt(paths, since: implicitSince, base: baseState)
            if let implicitSince, !replayer.reachedSince {
                guard InputPaths.canBeReadAgain(paths) else {
                    throw FerryError.data("the history holds no checkpoint with --base's last token \"\(implicitSince)\", and it "
                                          + "cannot be read again to apply all of it (standard input or a pipe): give it as a file, or give --since")
                }
                // The history does not go back to the base (the next file of a series, not the
                // whole log again): all of it follows the base. Read again from the start, as
                // what was read was skipped while looking for the token.
                replay.onNote?("the history holds no checkpoint with --base's last token \"\(implicitSince)\": "
                               + "all of it is applied after the base")
                replayer = try attempt(paths, since: nil, base: try loadBase(), notes: false)
            }
            let applied = clock.seconds
            if configuration.tokensOnly {
                try replayer.finish()
                return Summary(replayer, seconds: clock.seconds, phases: [])
            }
            try finish(replayer)
            let seconds = clock.seconds
            let result = Summary(replayer, seconds: seconds, phases: [("history", applied), ("checkAndWrite", seconds - applied)])
            // Everything is committed: the state's mappings and blocks are left to the exit.
            ProcessMemory.leaveForExit(replayer)
            return result
        }

        /// One pass over the histories at `paths`, on `base`.
        private mutating func attempt(_ paths: [String], since: String?, base: ReplayState, notes: Bool = true) throws -> Replayer {
            let reader = configuration.reading.reader
            var replayerConfiguration = Replayer.Configuration(
                until: configuration.until, since: configuration.since, tokensOnly: configuration.tokensOnly, cascade: configuration.cascade,
                ordersBatches: configuration.ordersBatches, reader: reader, decodingThreads: configuration.reading.threads)
            if let since { replayerConfiguration.since = since }
            let replayer = Replayer(configuration: replayerConfiguration, base: base)
            logFile?.abandon()
            if let log = configuration.log {
                let file = try OutputFile(path: log)
                logFile = file
                let writer = ChangeLogWriter(sink: RecordFormat.impliesGzip(log) ? try GzipSink(wrapping: file) : file)
                replayer.onApply = { try writer.write($0) }
                logWriter = writer
            }
            if let onProgress = replay.onProgress { replayer.onProgress = { onProgress($0.eventCount, $0.bytesRead) } }
            let sources = HistorySources(paths)
            if notes { sources.onNote = replay.onNote }
            try replayer.apply(sources: { try sources.next() })
            return replayer
        }

        /// Ends the replay and writes the state and the side outputs, committing them together.
        private func finish(_ replayer: Replayer) throws {
            if logWriter == nil && reportFile == nil {
                // The state is written while the reference check runs beside it.
                try replayer.finish { state in
                    if let output, let out = configuration.output { try write(state, to: output, path: out) }
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
                if let output, let out = configuration.output { try write(replayer.state, to: output, path: out) }
            }
            try logWriter?.finish()
            try reportFile?.commit()
        }

        /// Drops every output: none appears.
        func abandon() {
            output?.abandon()
            logFile?.abandon()
            reportFile?.abandon()
        }

        /// The base state with its tokens: from the archive's manifest, or from STATE.tokens.json.
        private func loadBase() throws -> ReplayState {
            guard let base = configuration.base else { return ReplayState() }
            let reader = try InputRecognizer(configuration: .init(maximumLineBytes: configuration.reading.maximumLineBytes)).openReader(base)
            var tokens: ReplayTokens?
            if let archive = reader as? ArchiveRecordReader {
                tokens = ReplayTokens(zones: archive.archive.manifest.zones.compactMap { zone in
                    zone.changeToken.map { ReplayTokens.ZoneToken(zoneID: zone.zoneID, syncToken: $0) }
                })
            } else if base != "-", FileSystem.exists(ReplayTokens.sidecarPath(for: base)) {
                tokens = try ReplayTokens(contentsOfFile: ReplayTokens.sidecarPath(for: base))
            }
            let state = try ReplayState(loading: reader, tokens: tokens)
            if configuration.since == nil && state.tokens.lastCheckpoint == nil {
                if reader is ArchiveRecordReader {
                    throw FerryError.usage("--base \(base) is an archive, whose manifest keeps each zone's token but not the last "
                                           + "checkpoint: give --since TOKEN")
                }
                throw FerryError.usage("--base \(base) comes with no tokens file naming its last checkpoint "
                                       + "(\(ReplayTokens.sidecarPath(for: base))): give --since TOKEN")
            }
            return state
        }

        /// Writes the state, and its tokens into the archive's manifest or beside the state.
        private func write(_ state: ReplayState, to output: RecordOutput, path: String) throws {
            let order: ReplayState.OutputOrder = configuration.ordersBatches ? .dependencies : .byName
            let tokens = state.tokens
            if let archive = output.archive {
                for zone in tokens.zones where !zone.isDeleted {
                    try archive.archive.addZone(zone.zoneID, database: configuration.database)
                    if let token = zone.syncToken { try archive.archive.setChangeToken(token, for: zone.zoneID, database: configuration.database) }
                }
                try state.write(to: output.writer, order: order)
                return
            }
            // A stream (standard output, a device or pipe such as /dev/null) has no place beside it for tokens.
            guard path != "-" && !Syscall.isSpecialFile(path) else {
                try state.write(to: output.writer, order: order)
                return
            }
            // The tokens are staged first and renamed last; an old tokens file goes before the state
            // is renamed, so no tokens file ever describes another state.
            let sidecar = ReplayTokens.sidecarPath(for: path)
            let tokensFile = try OutputFile(path: sidecar)
            do {
                try tokensFile.write(tokens.json())
                try state.write(to: output.writer, order: order) {
                    if FileSystem.exists(sidecar) { try FileSystem.remove(sidecar) }
                }
                try tokensFile.commit()
            } catch {
                tokensFile.abandon()
                throw error
            }
        }
    }
}
