import ArgumentParser
import FerryKit

/// `ferry verify ARCHIVE...`: checks every member of an archive against its manifest.
struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check an archive (every member's size and SHA-256, every zone's record counts) or a store.",
        discussion: """
        Reads the whole archive without writing anything. Every member must be listed in the \
        manifest (wherever it is in the archive) and match its size and SHA-256; every records \
        member must hold the counts per record type the manifest gives; nothing unsafe (absolute \
        paths, .., links, devices) and no decompression bomb is accepted. The first problem is \
        reported with the member and the byte offset in the tar stream; exit 1. Exit 0 when the \
        archive is intact. An archive without manifest.json (tar czf of a folder of exports) is \
        read whole and every record file decoded, then reported as unverifiable with exit 1, \
        saying what was and was not checked (--allow-missing-manifest: exit 0).

        A store (recognised by content) is checked with SQLite's integrity check and Ferry's \
        invariants: records in live zones, each zone's record count, each record's journal entry, \
        each zone's latest change; --deep also decodes every record and compares it with its columns.

        Examples:
          ferry verify backup.tar.gz
          ferry verify backup.tar.gz --json | jq .records
          curl -s https://example.com/backup.tgz | ferry verify -
          ferry verify chat.sqlite --deep
        """
    )

    @Argument(help: ArgumentHelp("Archives to verify (- is stdin).", valueName: "ARCHIVE"))
    var archives: [String] = []

    @OptionGroup var limits: ArchiveLimitOptions

    @Flag(help: "Print one JSON result per archive on stdout.")
    var json = false

    @Flag(help: "Print nothing on success, not even with --json.")
    var quiet = false

    @Flag(help: "Exit 0 for an archive without manifest.json whose records all decode (its sizes, checksums and counts cannot be checked).")
    var allowMissingManifest = false

    @Flag(help: "For a store: also decode every record and compare it with its system columns.")
    var deep = false

    func validate() throws {

        guard Ferry.validatesOptions else { return }
        guard !archives.isEmpty else { throw ValidationError("expected at least one ARCHIVE") }
        try checkInputsExist(archives)
        _ = try limits.configuration()
        // Options for one kind of input need an input of that kind (a store is told by content).
        let stores = archives.filter { $0 != "-" && StoreFile.isStore($0) }.count
        if deep && stores == 0 { throw ValidationError("--deep needs a store: it decodes a store's records") }
        if stores == archives.count {
            for (flag, used) in [("--allow-missing-manifest", allowMissingManifest), ("--max-ratio", limits.maxRatio != nil),
                                 ("--max-bytes", limits.maxBytes != nil)] where used {
                throw ValidationError("\(flag) needs an archive: it applies to reading one")
            }
        }
    }

    func run() throws {
        let verification = Verification(configuration: .init(archive: try limits.configuration(), requiresManifest: !allowMissingManifest,
                                                             deep: deep))
        var failed = false
        for path in archives {
            let result = verification.verify(path)
            // Nothing on success with --quiet, not even with --json.
            if json, !(quiet && result.isSuccess), let text = result.json { print(text) }
            if !json, !quiet, let line = result.line { print(line) }
            for problem in result.problems { note(problem) }
            failed = failed || !result.isSuccess
        }
        if failed { throw CommandFailure(message: "") }
    }
}
