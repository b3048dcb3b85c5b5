import ArgumentParser
import FerryArchive
import FerryCompression
import FerryIO
import FerryNDJSON
import FerryPredicate
import FerryRecords
import FerryStore

/// `ferry convert INPUT... OUTPUT`: read records, filter, project, sort, write.
struct Convert: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Convert records between formats, filtering and projecting on the way.",
        discussion: """
        INPUT may be a file, a folder (every file in it, by name), or - for standard input; OUTPUT a
        file or - for standard output. gzip-compressed inputs are recognized by their content;
        an OUTPUT ending in .gz (or --gzip) is compressed on every core. Formats come from file extensions or --from/--to. Inputs may
        be NDJSON (one record dictionary per line) or saved CloudKit Web Services responses
        ({"records": [...]}), one per line or pretty-printed.

        Output is written to a temporary file and renamed into place only on success: a failed run
        leaves no partial output. A one-line summary goes to stderr (--quiet silences it; --json
        prints it as JSON, on stdout unless OUTPUT is -, then on stderr).

        Examples:
          ferry convert export.ndjson messages.ndjson --type Message
          ferry convert export.ndjson.gz hot.ndjson --where 'count > 50 AND text CONTAINS[c] "hello"'
          ferry convert export.ndjson backup.ndjson.gz --level 9
          ferry convert saved-responses/ all.ndjson --on-error skip --rejects rejects.ndjson
          ferry convert export.ndjson backup.tar.gz --database shared --assets downloaded-assets/
          ferry convert backup.tar.gz - | jq -c 'select(.recordType == "Message")'
          cat export.ndjson | ferry convert - - --zone Chats --keys text,sentAt --sort sentAt:desc --limit 20
          ferry convert export.ndjson store.sqlite --mode upsert          # import into a store
          ferry convert store.sqlite messages.ndjson.gz --type Message --where 'count > 50'
          ferry convert store.sqlite changes.ndjson --changes-since fs1.3f9a0c4e5d6b7a81.1042
        """
    )

    @Argument(help: ArgumentHelp("Inputs, then the output (- is stdin/stdout).", valueName: "INPUT... OUTPUT"))
    var paths: [String] = []

    @Option(help: "Input format, when the content should not decide (ndjson, xml, archive).")
    var from: RecordFormat?

    @Option(help: "Output format when the extension doesn't say (ndjson, xml, archive).")
    var to: RecordFormat?

    @Option(name: .customLong("type"), help: "Keep only records of this type (repeatable).")
    var types: [String] = []

    @Option(name: .customLong("zone"), help: "Keep only records in this zone (repeatable).")
    var zones: [String] = []

    @Option(help: ArgumentHelp("Keep only these fields (comma-separated); system fields are kept.", valueName: "a,b"))
    var keys: String?

    @Option(help: ArgumentHelp("Sort by a field or system key, stable; large inputs sort on disk.", valueName: "key[:desc]"))
    var sort: String?

    @Option(help: "Write at most N records.")
    var limit: Int?

    @Option(name: .customLong("where"), help: ArgumentHelp("Keep only records matching this NSPredicate format string.", valueName: "PREDICATE"))
    var wherePredicate: String?

    @OptionGroup var predicateInput: PredicateInput

    @Option(help: ArgumentHelp("Database of the records written to an archive: public, private or shared.", valueName: "NAME"))
    var database: String = "private"

    @Option(help: ArgumentHelp("With an archive output: add every file of this folder as an asset, named by its fileChecksum (an extracted archive's assets/ works as is).", valueName: "DIR"))
    var assets: String?

    @Option(help: ArgumentHelp("With a store output: insert (records must be new), upsert (update fields) or replace (whole records).", valueName: "MODE"))
    var mode: StoreWriter.Mode?

    @Option(name: .customLong("changes-since"), help: ArgumentHelp("With a store input: write its journal after this store token (0 for all) as a Ferry change log.", valueName: "TOKEN"))
    var changesSince: String?

    @Flag(help: "Compress the output with gzip (implied by an OUTPUT ending in .gz).")
    var gzip = false

    @Option(help: "gzip compression level, 0–9.")
    var level: Int = 6

    @Option(help: "Threads for converting NDJSON and for compression (default: one per core this process may use, honouring taskset).")
    var threads: Int?

    @Option(name: .customLong("on-error"), help: "fail: stop at the first bad input (default). skip: skip it and go on.")
    var onError: ErrorMode = .fail

    @Option(help: ArgumentHelp("With --on-error skip: write every rejected input here, verbatim.", valueName: "FILE"))
    var rejects: String?

    @Flag(help: "No summary or progress on stderr.")
    var quiet = false

    @Flag(help: "Print the summary as JSON.")
    var json = false

    @Option(name: .customLong("max-line-bytes"), help: "Longest input line accepted.")
    var maxLineBytes: Int = 64 << 20

    func validate() throws {
        guard paths.count >= 2 else {
            throw ValidationError("expected at least one INPUT and an OUTPUT, found \(paths.count) path\(paths.count == 1 ? "" : "s")")
        }
        if rejects != nil && onError != .skip {
            throw ValidationError("--rejects needs --on-error skip")
        }
        if let sort, RecordSortKey(parsing: sort) == nil {
            throw ValidationError("--sort expects key[:asc|:desc], found '\(sort)'")
        }
        if let limit, limit < 0 {
            throw ValidationError("--limit expects a number ≥ 0, found \(limit)")
        }
        if !(0...9).contains(level) {
            throw ValidationError("--level expects 0–9, found \(level)")
        }
        if let assets, !FileSystem.isDirectory(assets) {
            throw ValidationError("--assets expects a folder, found '\(assets)'")
        }
        if let threads, threads < 1 {
            throw ValidationError("--threads expects a number ≥ 1, found \(threads)")
        }
        if let wherePredicate {
            do {
                _ = try RecordFilter(parsing: wherePredicate, arguments: try predicateInput.arguments())
            } catch let error as PredicateError {
                throw ValidationError("--where: " + error.rendered())
            }
        }
        if maxLineBytes < 1 {
            throw ValidationError("--max-line-bytes expects a positive number")
        }
        try checkInputsExist(Array(paths.dropLast()))
        if changesSince != nil {
            guard paths.count == 2, StoreFile.isStore(paths[0]) else {
                throw ValidationError("--changes-since needs one INPUT that is a store")
            }
        }
    }

    func run() throws {
        let inputs = Array(paths.dropLast())
        let outputPath = paths[paths.count - 1]
        if let changesSince {
            try exportChanges(from: inputs[0], since: changesSince, to: outputPath, gzip: gzip, quiet: quiet)
            return
        }
        let clock = Stopwatch()
        let progress = Progress(enabled: !quiet && StandardError.isTerminal)

        var rejectsFile: OutputFile?
        var output: RecordOutput?
        var stats = RunStatistics()
        do {
            if let rejects { rejectsFile = try OutputFile(path: rejects) }
            let out = try openRecordOutput(outputPath, options: RecordOutputOptions(
                format: to, gzip: gzip, level: level, threads: threads, database: database, storeMode: mode ?? .insert))
            output = out
            if let assets {
                guard let archive = out.archive else {
                    throw ValidationError("--assets needs an archive output (a name ending in .tar.gz or --to archive)")
                }
                try archive.archive.addAssets(fromDirectory: assets)
            }
            try convert(inputs, into: out, rejects: rejectsFile, stats: &stats, progress: progress, clock: clock)
            try out.finish()
            try rejectsFile?.commit()
        } catch {
            output?.abandon()
            rejectsFile?.abandon()
            progress.clear()
            throw dataFailure(error)
        }
        progress.clear()
        stats.recordsOut = output!.writer.recordCount + stats.parallelRecordsOut
        stats.bytesOut = output!.writer.bytesWritten + stats.parallelBytesOut
        stats.seconds = clock.seconds
        report(stats, outputIsStdout: outputPath == "-")
    }

    private func convert(_ inputs: [String], into output: RecordOutput, rejects: OutputFile?,
                         stats: inout RunStatistics, progress: Progress, clock: Stopwatch) throws {
        let writer = output.writer
        let filter = try wherePredicate.map { try RecordFilter(parsing: $0, arguments: try predicateInput.arguments()) }
        var evaluationWarnings = 0
        let keep = keys.map { Set($0.split(separator: ",").map { String($0).trimmed }) }
        let typeSet = Set(types)
        let zoneSet = Set(zones)
        let sorter = sort.flatMap(RecordSortKey.init(parsing:)).map { RecordSorter(key: $0) }
        var remaining = limit ?? Int.max
        var inputOptions = RecordInputOptions(format: from, maximumLineBytes: maxLineBytes)
        if onError == .skip { inputOptions.policy = .skip(rejects: rejects) }
        let workerThreads = threads ?? Processors.available
        // NDJSON to NDJSON without sorting runs on every core (see NDJSONParallelConverter).
        let parallelSink = sorter == nil ? (writer as? NDJSONWriter) : nil

        /// Type and zone filters, --where and projection: what happens to every record.
        @Sendable func shape(_ record: inout Record) throws -> Bool {
            if !typeSet.isEmpty && !typeSet.contains(record.recordType ?? "") { return false }
            if !zoneSet.isEmpty && !zoneSet.contains(record.zoneName) { return false }
            if let filter, try !filter.matches(record) { return false }
            if let keep, var fields = record.fields {
                fields.entries.removeAll { !keep.contains($0.name) }
                record.fields = fields
            }
            return true
        }
        func warn(_ message: String) {
            evaluationWarnings += 1
            if !quiet && evaluationWarnings <= 10 { StandardError.write("ferry: skipped: \(message)\n") }
        }
        func emit(_ record: Record) throws -> Bool {
            guard remaining > 0 else { return false }
            remaining -= 1
            try writer.write(record)
            return true
        }

        inputLoop: for path in try expandInputs(inputs) {
            if remaining == 0 { break }
            // A store is read through SQL, its filters pushed down (the shaping below repeats them).
            let storeInput = try openStoreReader(path, declared: from)
            try storeInput?.restrict(to: StoreQuery(recordTypes: types, zoneNames: zones, predicate: filter?.predicate))
            let input = try storeInput == nil ? ArchiveDetection.openInput(try InputFile(path: path)) : nil
            if let input, let parallelSink, !input.isArchive,
               try inputFormat(of: input.source, isArchive: false, declared: from) == .ndjson,
               let peekable = input.source as? PeekableSource,
               NDJSONParallelConverter.canConvert(try peekable.peek(1 << 20), maximumDepth: 512) {
                try parallelSink.flush()
                let converter = NDJSONParallelConverter(
                    source: input.source, sink: parallelSink.sink, policy: inputOptions.policy,
                    prefilter: filter.map(NDJSONPrefilter.init(for:)), transform: shape,
                    configuration: .init(threads: workerThreads, maximumLineBytes: maxLineBytes))
                converter.limit = limit == nil ? nil : remaining
                var warnings = 0
                converter.onReject = { error in
                    warnings += 1
                    if !quiet && warnings <= 10 {
                        StandardError.write("ferry: skipped: \(error)\n")
                    } else if !quiet && warnings == 11 {
                        StandardError.write("ferry: more skipped inputs in \(path) not shown\n")
                    }
                }
                converter.onTransformFailure = { failure in
                    warn("\(path): record \(failure.recordIndex): cannot evaluate --where: \(Self.message(of: failure.underlying))")
                }
                let before = stats
                converter.onProgress = { current in
                    progress.update(records: before.recordsIn + current.recordsRead, bytes: before.bytesIn + current.bytesRead, clock: clock)
                }
                let result: NDJSONParallelConverter.Statistics
                do {
                    result = try converter.run()
                } catch let failure as NDJSONParallelConverter.TransformFailure {
                    throw CommandFailure(message: "\(path): record \(failure.recordIndex): cannot evaluate --where: \(Self.message(of: failure.underlying))")
                }
                stats.recordsIn += result.recordsRead
                stats.rejected += result.rejected
                stats.bytesIn += result.bytesRead
                stats.parallelRecordsOut += result.recordsWritten
                stats.parallelBytesOut += result.bytesWritten
                remaining -= result.recordsWritten
                continue
            }

            let reader = try storeInput ?? openRecordReader(input!.source, name: path, options: inputOptions, isArchive: input!.isArchive)
            let archiveInput = reader as? ArchiveRecordReader
            if let archiveInput, let archiveOutput = output.archive {
                ArchiveCarryOver.begin(from: archiveInput, into: archiveOutput)
            }
            if let archiveInput, let storeOutput = output.store { StoreCarryOver.begin(from: archiveInput, into: storeOutput) }
            let ndjsonReader = reader as? NDJSONReader
            if let filter, let ndjsonReader {
                ndjsonReader.prefilter = NDJSONPrefilter(for: filter)
            }
            var warnings = 0
            reader.onReject = { error in
                warnings += 1
                if !quiet && warnings <= 10 {
                    StandardError.write("ferry: skipped: \(error)\n")
                } else if !quiet && warnings == 11 {
                    StandardError.write("ferry: more skipped inputs in \(path) not shown\n")
                }
            }
            var readerRecords: Int { reader.recordCount + (ndjsonReader?.prefilteredCount ?? 0) }
            defer {
                stats.recordsIn += readerRecords
                stats.rejected += reader.rejectedCount
                stats.bytesIn += reader.bytesRead
            }
            while var record = try reader.next() {
                do {
                    guard try shape(&record) else { continue }
                } catch {
                    let message = "\(path): record \(reader.recordIndex): cannot evaluate --where: \(Self.message(of: error))"
                    if onError == .fail { throw CommandFailure(message: message) }
                    warn(message)
                    continue
                }
                if let sorter {
                    try sorter.add(record)
                } else if let archiveOutput = output.archive, let current = archiveInput?.current {
                    guard remaining > 0 else { break inputLoop }
                    remaining -= 1
                    try archiveOutput.write(record, database: current.database)
                } else if let storeOutput = output.store, let current = archiveInput?.current {
                    guard remaining > 0 else { break inputLoop }
                    remaining -= 1
                    try storeOutput.write(record, database: current.database)
                } else if try !emit(record) {
                    break inputLoop
                }
                if progress.isEnabled {
                    progress.update(records: readerRecords + stats.recordsIn, bytes: reader.bytesRead + stats.bytesIn, clock: clock)
                }
            }
            if let archiveInput, let archiveOutput = output.archive {
                try ArchiveCarryOver.finish(from: archiveInput, into: archiveOutput)
            }
            if let archiveInput, let storeOutput = output.store { try StoreCarryOver.finish(from: archiveInput, into: storeOutput) }
            if let storeInput, let archiveOutput = output.archive { try StoreCarryOver.finish(from: storeInput, into: archiveOutput) }
        }
        if let sorter { try sorter.finish(emit) }
    }

    /// The message of a predicate evaluation error, or the error's description.
    static func message(of error: any Error) -> String {
        (error as? PredicateError)?.message ?? String(describing: error)
    }

    private func report(_ stats: RunStatistics, outputIsStdout: Bool) {
        if json {
            let text = stats.json + "\n"
            if outputIsStdout { StandardError.write(text) } else { print(text, terminator: "") }
        } else if !quiet {
            StandardError.write("ferry: " + stats.line + "\n")
        }
    }
}

/// Expands folders into the files they hold (sorted by name).
func expandInputs(_ inputs: [String]) throws -> [String] {
    var result: [String] = []
    for input in inputs {
        if input != "-" && FileSystem.isDirectory(input) {
            do {
                result.append(contentsOf: try FileSystem.files(in: input))
            } catch let error as FerryIOError {
                throw CommandFailure(message: error.description)
            }
        } else {
            result.append(input)
        }
    }
    return result
}

extension String {
    var trimmed: String {
        var s = Substring(self)
        while s.first == " " { s = s.dropFirst() }
        while s.last == " " { s = s.dropLast() }
        return String(s)
    }
}

extension NDJSONPrefilter {
    /// The prefilter for `--where`: the predicate's literals on raw lines, then a decode of only
    /// the fields it reads. Evaluation errors let the record through to the full decode, which
    /// reports them.
    init(for filter: RecordFilter) {
        self.init()
        if let literals = filter.literals {
            mightMatch = { line in literals.mightMatch(line) }
        }
        if let selection = filter.fieldSelection {
            self.selection = selection
            accepts = { record in (try? filter.matches(record)) ?? true }
        }
    }
}
