import ArgumentParser
import FerryArchive
import FerryCompression
import FerryIO
import FerryInternals
import FerryNDJSON
import FerryPipeline
import FerryPredicate
import FerryRecords
import FerryStore

/// `ferry convert INPUT... OUTPUT`: read records, filter, project, sort, write.
struct Convert: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Convert records between formats, filtering and projecting on the way.",
        discussion: """
        INPUT may be a file, a folder (every file under it, subfolders included, by name; hidden \
        entries and SQLite -wal/-shm/-journal files beside a store are skipped, and counted on \
        stderr), or - for standard input; OUTPUT a \
        file or - for standard output. gzip-compressed inputs are recognized by their content; \
        an empty input whose name (.gz, .tgz, .tar, .xml, .sqlite) or --from promises gzip, an \
        archive, XML or a store is refused as truncated (an empty NDJSON input is 0 records); \
        an OUTPUT ending in .gz (or --gzip) is compressed on every core. Formats come from file extensions or --from/--to: \
        an OUTPUT whose extension Ferry does not know needs --to (- is NDJSON), and .tar is an archive without gzip. Inputs may \
        be NDJSON (one record dictionary per line) or saved CloudKit Web Services responses \
        ({"records": [...]}), one per line or pretty-printed.

        Output is written to a temporary file and renamed into place only on success: a failed run \
        leaves no partial output. OUTPUT may therefore be one of the inputs, as with sort -o: \
        `ferry convert x.ndjson x.ndjson --type Message` keeps only x's messages, renaming the new \
        file over x after all of it was read (a store output, written in place, may not be an \
        input). An option that would change nothing is a usage error (exit 2): \
        --mode and --busy-timeout need a store output, --database an archive or a store, --level a gzip-compressed \
        output, --assets an archive, --gzip anything but a store; --args needs --where, \
        --sort-memory --sort. A store is read \
        from its file, not from standard input. A one-line summary goes to stderr (--quiet silences it; --json \
        prints it as JSON, on stdout unless OUTPUT is -, then on stderr).

        Examples:
          ferry convert export.ndjson messages.ndjson --type Message
          ferry convert export.ndjson.gz hot.ndjson \\
              --where 'count > 50 AND text CONTAINS[c] "hello"'
          ferry convert export.ndjson backup.ndjson.gz --level 9
          ferry convert saved-responses/ all.ndjson --on-error skip \\
              --rejects rejects.ndjson
          ferry convert export.ndjson backup.tar.gz --database shared \\
              --assets downloaded-assets/
          ferry convert backup.tar.gz - | jq -c 'select(.recordType == "Message")'
          cat export.ndjson | ferry convert - - --zone Chats --keys text,sentAt \\
              --sort sentAt:desc --limit 20
          ferry convert export.ndjson store.sqlite --mode upsert   # into a store
          ferry convert store.sqlite messages.ndjson.gz --type Message \\
              --where 'count > 50'
          ferry convert store.sqlite changes.ndjson \\
              --changes-since fs1.3f9a0c4e5d6b7a81.1042
        """
    )

    @Argument(help: ArgumentHelp("Inputs, then the output (- is stdin/stdout).", valueName: "INPUT... OUTPUT"))
    var paths: [String] = []

    @Option(help: "Input format, when the content should not decide.")
    var from: RecordFormat?

    @Option(help: "Output format, when the extension doesn't say.")
    var to: RecordFormat?

    @Option(name: .customLong("type"), help: "Keep only records of this type (repeatable).")
    var types: [String] = []

    @Option(name: .customLong("zone"), help: "Keep only records in this zone (repeatable).")
    var zones: [String] = []

    @Option(help: ArgumentHelp("Keep only these fields (comma-separated); system fields are kept.", valueName: "a,b"))
    var keys: String?

    @Option(help: ArgumentHelp("Sort by a field or system key, stable; large inputs sort on disk.", valueName: "key[:desc]"))
    var sort: String?

    @Option(help: ArgumentHelp("With --sort: memory for records before sorted runs spill to $TMPDIR (default 512M).", valueName: "SIZE"))
    var sortMemory: String?

    @Option(parsing: .unconditional, help: "Write at most N records.")
    var limit: Int?

    @Option(name: .customLong("where"), help: ArgumentHelp("Keep only records matching this NSPredicate format string. A record it cannot be evaluated on (a number where it compares strings) does not match; stderr counts them.", valueName: "PREDICATE"))
    var wherePredicate: String?

    @OptionGroup var predicateInput: PredicateInput

    @Option(help: ArgumentHelp("With an archive or a store output: the database the records go into, public, private (default) or shared (records read from an archive or a store keep theirs).", valueName: "NAME"))
    var database: String?

    @Option(help: ArgumentHelp("With an archive output: add every file of this folder as an asset, named by its fileChecksum (an extracted archive's assets/ works as is).", valueName: "DIR"))
    var assets: String?

    @Option(help: ArgumentHelp("With a store output: insert (records must be new), upsert (update fields) or replace (whole records).", valueName: "MODE"))
    var mode: StoreWriter.Mode?

    @Option(name: .customLong("busy-timeout"), parsing: .unconditional,
            help: "With a store output: seconds to wait for another process writing to the store (default 5; at most 2147483, about 24 days).")
    var busyTimeout: Double?

    @Option(name: .customLong("changes-since"), help: ArgumentHelp("With a store input: write its journal after this store token (0 for all) as a Ferry change log.", valueName: "TOKEN"))
    var changesSince: String?

    @Flag(help: "Compress the output with gzip (implied by an OUTPUT ending in .gz).")
    var gzip = false

    @Option(parsing: .unconditional, help: "With a gzip-compressed output (.gz, .tar.gz, --gzip): the compression level, 0–9 (default 6).")
    var level: Int?

    @Option(parsing: .unconditional, help: "Threads for converting NDJSON and for compression, 1–256 (default: one per core this process may use, honouring taskset).")
    var threads: Int?

    @Option(name: .customLong("on-error"), help: "fail: stop at the first bad input (default). skip: skip it and go on.")
    var onError: ErrorMode = .fail

    @Option(help: ArgumentHelp("With --on-error skip: write every rejected input here, verbatim (a file of its own: not an INPUT or OUTPUT).", valueName: "FILE"))
    var rejects: String?

    @Flag(help: "No summary or progress on stderr.")
    var quiet = false

    @Flag(help: "Print the summary as JSON.")
    var json = false

    @Option(name: .customLong("max-line-bytes"), parsing: .unconditional, help: "Longest input line accepted (also the largest pretty-printed document read from stdin or gzip).")
    var maxLineBytes: Int = 64 << 20

    func validate() throws {

        guard Ferry.validatesOptions else { return }
        guard paths.count >= 2 else {
            throw ValidationError("expected at least one INPUT and an OUTPUT, found \(Plural.count(paths.count, "path"))")
        }
        if rejects != nil && onError != .skip {
            throw ValidationError("--rejects needs --on-error skip")
        }
        if let sort, RecordSortKey(parsing: sort) == nil {
            throw ValidationError("--sort expects key[:asc|:desc], found '\(sort)'")
        }
        if let sortMemory, parseSize(sortMemory) == nil {
            throw ValidationError("--sort-memory expects a size such as 64M or 2G, found '\(sortMemory)'")
        }
        if let limit { try checkNumber(limit, of: "--limit", in: 0...Int.max) }
        if let level { try checkNumber(level, of: "--level", in: 0...9) }
        if let busyTimeout { try checkBusyTimeout(busyTimeout) }
        if let assets, !FileSystem.isDirectory(assets) {
            throw ValidationError("--assets expects a folder, found '\(assets)'")
        }
        try checkThreads(threads, minimum: 1)
        if let wherePredicate {
            do {
                _ = try RecordFilter(parsing: wherePredicate, arguments: try predicateInput.arguments())
            } catch let error as PredicateError {
                throw ValidationError("--where: " + error.rendered())
            }
        }
        try checkNumber(maxLineBytes, of: "--max-line-bytes", in: 1...Int.max)
        try checkInputsExist(Array(paths.dropLast()))
        if changesSince != nil {
            guard paths.count == 2, StoreFile.isStore(paths[0]) else {
                throw ValidationError("--changes-since needs one INPUT that is a store")
            }
            let recordOptions = [("--type", !types.isEmpty), ("--zone", !zones.isEmpty), ("--where", wherePredicate != nil),
                                 ("--keys", keys != nil), ("--sort", sort != nil), ("--limit", limit != nil)]
            if let (flag, _) = recordOptions.first(where: \.1) {
                throw ValidationError("\(flag) does not apply with --changes-since, which writes every change after the token")
            }
        }
        let output = paths[paths.count - 1]
        try checkOptionsApply(toOutput: output)
        try RunFiles(inputs: paths.dropLast().map { .init(role: "INPUT", path: $0) } + (assets.map { [.init(role: "--assets", path: $0)] } ?? []),
                     output: .init(role: "OUTPUT", path: output),
                     outputIsWrittenInPlace: changesSince == nil && (try outputFormat(of: output, declared: to)) == .store,
                     sideOutputs: rejects.map { [.init(role: "--rejects", path: $0)] } ?? []).check()
    }

    /// Usage error for an option given that would change nothing: one that only some outputs use,
    /// given for another, or one that refines an option not given.
    private func checkOptionsApply(toOutput path: String) throws {
        if predicateInput.args != nil && wherePredicate == nil {
            throw ValidationError("--args needs --where: it gives the values of the predicate's %@ and %K")
        }
        if sortMemory != nil && sort == nil { throw ValidationError("--sort-memory needs --sort") }
        _ = try keyList(keys)
        // With --changes-since the output is a change log: NDJSON, gzipped when asked.
        let format = changesSince == nil ? try outputFormat(of: path, declared: to) : .ndjson
        let isCompressed = format == .store ? false
            : format == .archive ? gzip || RecordFormat.archiveIsCompressed(path) : gzip || RecordFormat.impliesGzip(path)
        let found = "found \(path == "-" ? "standard output (-)" : path) ("
            + (changesSince != nil ? "a change log" : isCompressed ? "\(format.rawValue), gzip-compressed" : format.rawValue) + ")"
        if format == .store && path == "-" {
            throw ValidationError("a store is written to a file, not to standard output")
        }
        if format == .store && Syscall.isSpecialFile(path) {
            throw ValidationError("a store is written to a file, not to a device or pipe, found \(path)")
        }
        if gzip && format == .store && changesSince == nil {
            throw ValidationError("--gzip needs an output that can be compressed (NDJSON, XML, an archive), \(found): a store is one SQLite file")
        }
        for (flag, used) in [("--mode", mode != nil), ("--busy-timeout", busyTimeout != nil)] where used && format != .store {
            throw ValidationError("\(flag) needs a store output (a name ending in .sqlite, or --to store), \(found)")
        }
        if database != nil && format != .store && format != .archive {
            throw ValidationError("--database needs an archive or a store output (names ending in .tar.gz or .sqlite, or --to), \(found)")
        }
        if level != nil && !isCompressed {
            throw ValidationError("--level needs a gzip-compressed output (a name ending in .gz, .tar.gz or .tgz, or --gzip), \(found)")
        }
        if assets != nil && format != .archive {
            throw ValidationError("--assets needs an archive output (a name ending in .tar.gz, or --to archive), \(found)")
        }
    }

    func run() throws {
        let outputPath = paths[paths.count - 1]
        if let changesSince {
            try exportChanges(from: paths[0], since: changesSince, to: outputPath, gzip: gzip, level: level ?? 6, quiet: quiet, json: json)
            return
        }
        let clock = Stopwatch()
        let progress = Progress(enabled: !quiet && StandardError.isTerminal)
        var rejectsFile: OutputFile?
        var output: RecordOutput?
        var statistics: RunStatistics
        var firstUnevaluated: TransformFailure?
        do {
            if let rejects { rejectsFile = try OutputFile(path: rejects) }
            let out = try openRecordOutput(outputPath, options: RecordOutputOptions(
                format: to, gzip: gzip, level: level ?? 6, threads: threads, database: database ?? "private", storeMode: mode ?? .insert,
                busyTimeout: busyTimeout ?? 5))
            output = out
            if let assets, let archive = out.archive { try archive.archive.addAssets(fromDirectory: assets) }
            let pipeline = try makePipeline(into: out.writer, rejects: rejectsFile)
            if progress.isEnabled {
                pipeline.onProgress = { progress.update(records: $0.recordsIn, bytes: $0.bytesIn, clock: clock) }
            }
            let sources = RecordSources(paths: try expandInputs(Array(paths.dropLast()), quiet: quiet),
                                        options: RecordInputOptions(format: from, policy: pipeline.policy, maximumLineBytes: maxLineBytes),
                                        transform: pipeline.transform)
            sources.output = out
            if !quiet { sources.onNote = { StandardError.write("ferry: \($0)\n") } }
            while pipeline.wantsMore, let source = try sources.next() {
                try pipeline.read(source)
            }
            // The rejects are written out before the output is committed (a rejects file that
            // cannot be written fails the run with no output), and committed after it.
            try rejectsFile?.flush()
            statistics = try pipeline.finish()
            firstUnevaluated = pipeline.firstTransformFailure
            out.markFinished()
            try rejectsFile?.commit()
        } catch {
            output?.abandon()
            rejectsFile?.abandon()
            progress.clear()
            throw dataFailure(error)
        }
        progress.clear()
        statistics.seconds = clock.seconds
        if statistics.recordsIn == 0 && statistics.zoneListings > 0 && statistics.rejected == 0 {
            // The warnings said which responses list zones; nothing else was read.
            if !quiet { StandardError.write("ferry: no records: the inputs hold only zones (see `ferry inspect`)\n") }
        }
        if let firstUnevaluated, !quiet {
            let n = statistics.transformFailures
            StandardError.write("ferry: \(Plural.count(n, "record")) the predicate could not be evaluated on did not match; "
                                + "the first: \(firstUnevaluated)\n")
        }
        report(statistics, outputIsStdout: outputPath == "-")
    }

    /// The pipeline of this run: type, zone, --where and --keys as its transform, --sort and
    /// --limit, the error policy, and warnings on stderr.
    private func makePipeline(into writer: any RecordWriter, rejects: OutputFile?) throws -> RecordPipeline {
        let filter = try wherePredicate.map { try RecordFilter(parsing: $0, arguments: try predicateInput.arguments()) }
        let transform = RecordTransform(types: Set(types), zones: Set(zones), filter: filter,
                                        keys: try keyList(keys).map(Set.init))
        let budget = sortMemory.flatMap(parseSize) ?? (512 << 20)
        let sorter = sort.flatMap(RecordSortKey.init(parsing:)).map { RecordSorter(key: $0, memoryBudget: budget) }
        let pipeline = RecordPipeline(writer: writer, transform: transform,
                                      policy: onError == .skip ? .skip(rejects: rejects) : .fail,
                                      threads: threads ?? Processors.available, buffer: sorter, limit: limit)
        pipeline.onReject = skippedInputReporter(quiet: quiet)
        let quiet = self.quiet
        var warnings = 0
        pipeline.onZoneListing = { listing in
            warnings += 1
            let zones = listing.response.entries.count
            // A `zones/lookup` or `zones/modify` answer has the shape of a `zones/list` one.
            let shape = listing.shape == "zones/list" ? "zones/list, zones/lookup or zones/modify" : listing.shape
            let message = "\(listing.source):\(listing.line): a \(shape) response (\(Plural.count(zones, "zone"))) "
                + "holds no records; `ferry inspect` describes its zones"
            if !quiet && warnings <= 10 { StandardError.write("ferry: \(message)\n") }
        }
        return pipeline
    }

    private func report(_ stats: RunStatistics, outputIsStdout: Bool) {
        if json {
            writeSummary(stats.json, outputIsStdout: outputIsStdout)
        } else if !quiet {
            StandardError.write("ferry: " + stats.line + "\n")
        }
    }
}

/// What `--on-error skip` reports of each skipped input: `ferry: skipped: ERROR` on stderr, at
/// most ten per input file, then one line saying more were not shown; nothing when `quiet`.
func skippedInputReporter(quiet: Bool) -> (any Error) -> Void {
    var shown: [String: Int] = [:]
    return { error in
        guard !quiet else { return }
        let source = (error as? RecordFormatError)?.source ?? ""
        let count = shown[source, default: 0] + 1
        shown[source] = count
        if count <= 10 {
            StandardError.write("ferry: skipped: \(error)\n")
        } else if count == 11 {
            StandardError.write("ferry: more skipped inputs in \(source) not shown\n")
        }
    }
}

/// Prints a command's `--json` summary line: on stdout, or on stderr when the command's output
/// goes to stdout (`-`), so that the output stays what it is.
func writeSummary(_ json: String, outputIsStdout: Bool) {
    if outputIsStdout { StandardError.write(json + "\n") } else { print(json) }
}

/// Expands folders into the files under them (`FileSystem.listFiles`: subfolders depth-first, by
/// name), saying on stderr, unless `quiet`, how many entries each folder passed over (hidden
/// entries, SQLite sidecar files, links to folders of the tree, FIFOs and devices).
func expandInputs(_ inputs: [String], quiet: Bool) throws -> [String] {
    var result: [String] = []
    for input in inputs {
        if input != "-" && FileSystem.isDirectory(input) {
            let listing: FolderListing
            do {
                listing = try FileSystem.listFiles(in: input)
            } catch let error as FerryIOError {
                throw CommandFailure(message: error.description)
            }
            result.append(contentsOf: listing.files)
            if !quiet && !listing.skipped.isEmpty {
                let count = listing.skipped.count
                let shown = listing.skipped.prefix(3).joined(separator: ", ") + (count > 3 ? ", …" : "")
                StandardError.write("ferry: \(input): skipped \(count) \(count == 1 ? "entry" : "entries") (hidden, SQLite "
                                    + "sidecar files, links to folders of the tree, neither file nor folder): \(shown)\n")
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
