import ArgumentParser
import FerryInternals
import FerryKit

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
        _ = try filter()
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
        try checkOptionsApply(toOutput: paths[paths.count - 1])
        // The files the run reads and writes are checked by FerryKit as the run starts.
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
        let format = changesSince == nil ? try usage { () throws(FerryError) in try RecordOutput.format(of: path, declared: to) } : .ndjson
        let isCompressed = format.compresses(path, gzip: gzip)
        let found = "found \(path == "-" ? "standard output (-)" : path) ("
            + (changesSince != nil ? "a change log" : isCompressed ? "\(format.rawValue), gzip-compressed" : format.rawValue) + ")"
        try usage { () throws(FerryError) in try RecordOutput.checkTarget(path, format: format) }
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

    /// The compiled `--where` predicate, or `nil`; a usage error naming where it does not parse.
    private func filter() throws -> RecordFilter? {
        guard let wherePredicate else { return nil }
        do {
            return try RecordFilter(parsing: wherePredicate, arguments: try predicateInput.arguments())
        } catch let error as PredicateError {
            throw ValidationError("--where: " + error.rendered())
        }
    }

    /// The options as FerryKit's configuration of the run.
    private func configuration() throws -> Conversion.Configuration {
        Conversion.Configuration(
            inputs: Array(paths.dropLast()), output: paths[paths.count - 1],
            reading: .init(format: from, maximumLineBytes: maxLineBytes),
            writing: .init(format: to, gzip: gzip, level: level ?? 6, threads: threads, database: database ?? "private",
                           storeMode: mode ?? .insert, busyTimeout: busyTimeout ?? 5),
            transform: RecordTransform(types: Set(types), zones: Set(zones), filter: try filter(), keys: try keyList(keys).map(Set.init)),
            sort: sort.flatMap(RecordSortKey.init(parsing:)), sortMemory: sortMemory.flatMap(parseSize) ?? (512 << 20),
            limit: limit, skipsBadInput: onError == .skip, rejects: rejects, assets: assets, threads: threads, changesSince: changesSince)
    }

    func run() throws {
        let conversion = Conversion(configuration: try configuration())
        let outputIsStdout = paths[paths.count - 1] == "-"
        if changesSince != nil {
            let export = try conversion.exportChanges()
            if json { writeSummary(export.json, outputIsStdout: outputIsStdout) } else if !quiet { note(export.line) }
            return
        }
        let progress = Progress(enabled: !quiet && StandardError.isTerminal)
        if !quiet {
            var warnings = 0
            let skipped = SkippedInputNotes()
            conversion.onNote = { progress.clear(); note($0) }
            conversion.onWarning = { warnings += 1; if warnings <= 10 { note($0) } }
            conversion.onReject = { if let text = skipped.note(for: $0) { note(text) } }
        }
        if progress.isEnabled {
            let clock = Stopwatch()
            conversion.onProgress = { progress.update(records: $0.recordsIn, bytes: $0.bytesIn, clock: clock) }
        }
        defer { progress.clear() }
        let statistics = try conversion.run()
        progress.clear()
        if json {
            writeSummary(statistics.json, outputIsStdout: outputIsStdout)
        } else if !quiet {
            note(statistics.line)
        }
    }
}
