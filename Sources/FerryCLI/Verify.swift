import ArgumentParser
import FerryArchive
import FerryIO
import FerryInternals
import FerryRecords
import FerryStore

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
        var failed: CommandFailure?
        for path in archives {
            let kind = path == "-" ? .notSQLite : StoreFile.kind(at: path)
            if kind == .store {
                if let failure = verifyStore(path) { failed = failure }
                continue
            }
            do {
                if case .otherSQLite = kind { throw CommandFailure(message: "\(path): " + StoreFile.notAStoreMessage(kind)) }
                let verifier = ArchiveVerifier(configuration: try limits.configuration(),
                                               requiresManifest: !allowMissingManifest)
                let input = try openInputFile(path, declared: nil, expecting: "an archive or a store")
                // A store read as a stream (standard input, gzip) is not an archive with a bad header.
                if case .store = StoreFile.kind(ofPrefix: try input.peek(100)) { throw storeOnStream(path) }
                let report = try verifier.verify(input)
                if quiet {
                    // Nothing on success, not even with --json.
                } else if json {
                    print(Self.json(path: path, ok: true, members: report.memberCount, records: report.recordCount, error: nil))
                } else {
                    print("\(path): ok — \(report.summary)")
                }
            } catch {
                let message = String(describing: error)
                if json {
                    print(Self.json(path: path, ok: false, members: nil, records: nil, error: error))
                }
                StandardError.write("ferry: \(message)\n")
                failed = CommandFailure(message: "")
            }
        }
        if let failed { throw failed }
    }

    /// Checks a store; prints the result; returns a failure when it is not intact.
    private func verifyStore(_ path: String) -> CommandFailure? {
        do {
            let result = try RecordStore(path: path).verify(deep: deep)
            if json && !(quiet && result.isIntact) {
                var object: JSONObject = ["store": .string(path), "ok": .bool(result.isIntact),
                                          "records": .number(JSONNumber(Int64(result.recordCount))),
                                          "zones": .number(JSONNumber(Int64(result.zoneCount))),
                                          "journal": .number(JSONNumber(Int64(result.journalCount))),
                                          "token": .string(result.token.description)]
                object.append(key: "problems", value: .array(result.problems.map(JSONValue.string)))
                var out = JSONOutput(capacity: 512)
                out.appendValue(.object(object))
                print(String(decoding: out.bytes, as: UTF8.self))
            }
            if result.isIntact {
                if !json && !quiet {
                    print("\(path): ok — \(Plural.count(result.recordCount, "record")) in \(Plural.count(result.zoneCount, "zone")), \(Plural.count(result.journalCount, "journal entry", plural: "journal entries")) "
                          + "up to \(result.token); SQLite's integrity check and Ferry's invariants hold")
                }
                return nil
            }
            for problem in result.problems { StandardError.write("ferry: \(path): \(problem)\n") }
            return CommandFailure(message: "")
        } catch {
            StandardError.write("ferry: \(error)\n")
            return CommandFailure(message: "")
        }
    }

    private static func json(path: String, ok: Bool, members: Int?, records: Int?, error: (any Error)?) -> String {
        var object: JSONObject = ["archive": .string(path), "ok": .bool(ok)]
        if let members { object.append(key: "members", value: .number(JSONNumber(Int64(members)))) }
        if let records { object.append(key: "records", value: .number(JSONNumber(Int64(records)))) }
        if let failure = error as? ArchiveError {
            object.append(key: "code", value: .string(failure.code.rawValue))
            if let member = failure.member { object.append(key: "member", value: .string(member)) }
            if let offset = failure.offset { object.append(key: "offset", value: .number(JSONNumber(Int64(offset)))) }
            object.append(key: "message", value: .string(failure.description))
        } else if let error {
            object.append(key: "message", value: .string(String(describing: error)))
        }
        var out = JSONOutput(capacity: 512)
        out.appendValue(.object(object))
        return String(decoding: out.bytes, as: UTF8.self)
    }
}
