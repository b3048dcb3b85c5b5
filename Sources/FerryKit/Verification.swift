import FerryArchive
import FerryInternals
import FerryRecords
import FerryStore

/// Archives and stores checked, as `ferry verify` checks them: an archive's every member
/// against its manifest (size, SHA-256, record counts), nothing unsafe and no decompression
/// bomb accepted; a store with SQLite's integrity check and Ferry's invariants.
///
/// ```swift
/// let result = Verification().verify("backup.tar.gz")
/// if !result.isSuccess { print(result.problems) }
/// ```
public struct Verification: Sendable {
    /// How archives and stores are checked.
    public struct Configuration: Sendable {
        /// Limits for reading untrusted archives.
        public var archive: ArchiveReader.Configuration
        /// Whether an archive without a manifest fails (its records all decoding or not).
        public var requiresManifest: Bool
        /// For a store: also decode every record and compare it with its system columns.
        public var deep: Bool

        /// A configuration; by default archives need a manifest and stores get the quick check.
        public init(archive: ArchiveReader.Configuration = .init(), requiresManifest: Bool = true, deep: Bool = false) {
            self.archive = archive
            self.requiresManifest = requiresManifest
            self.deep = deep
        }
    }

    /// How archives and stores are checked.
    public var configuration: Configuration

    /// A verification as `configuration` says.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Checks the archive or store at `path` (`-` is standard input: an archive), recognized by
    /// content. A failure is a result, not an error: each input of a run is checked.
    public func verify(_ path: String) -> VerificationResult {
        let kind = path == "-" ? .notSQLite : StoreFile.kind(at: path)
        if kind == .store {
            do {
                return .store(path: path, report: try RecordStore(path: path).verify(deep: configuration.deep))
            } catch {
                return .storeFailure(path: path, error: FerryError(wrapping: error))
            }
        }
        do {
            if case .otherSQLite = kind { throw FerryError.data("\(path): " + StoreFile.notAStoreMessage(kind)) }
            let verifier = ArchiveVerifier(configuration: configuration.archive, requiresManifest: configuration.requiresManifest)
            let input = try InputRecognizer().openFile(path, expecting: "an archive or a store")
            // A store read as a stream (standard input, gzip) is not an archive with a bad header.
            if case .store = StoreFile.kind(ofPrefix: try input.peek(100)) { throw InputRecognizer.storeOnStream(path) }
            return .archive(path: path, report: try verifier.verify(input))
        } catch {
            return .archiveFailure(path: path, error: error)
        }
    }
}

/// What ``Verification/verify(_:)`` found for one input, with what `ferry verify` prints of it.
public enum VerificationResult {
    /// An intact archive.
    case archive(path: String, report: ArchiveVerifier.Report)
    /// An archive that failed its check or could not be read (an `ArchiveError` says where).
    case archiveFailure(path: String, error: any Error)
    /// A store checked: intact or not (``RecordStore/Verification/problems``).
    case store(path: String, report: RecordStore.Verification)
    /// A store that could not be checked.
    case storeFailure(path: String, error: FerryError)

    /// Whether the input is intact.
    public var isSuccess: Bool {
        switch self {
        case .archive: true
        case .store(_, let report): report.isIntact
        case .archiveFailure, .storeFailure: false
        }
    }

    /// The line printed for an intact input (`PATH: ok — …`); `nil` for a failure.
    public var line: String? {
        switch self {
        case .archive(let path, let report):
            return "\(path): ok — \(report.summary)"
        case .store(let path, let result) where result.isIntact:
            return "\(path): ok — \(Plural.count(result.recordCount, "record")) in \(Plural.count(result.zoneCount, "zone")), "
                + "\(Plural.count(result.journalCount, "journal entry", plural: "journal entries")) "
                + "up to \(result.token); SQLite's integrity check and Ferry's invariants hold"
        default:
            return nil
        }
    }

    /// What is wrong, one sentence each; empty for an intact input.
    public var problems: [String] {
        switch self {
        case .archive: []
        case .store(let path, let result): result.problems.map { "\(path): \($0)" }
        case .archiveFailure(_, let error): [String(describing: error)]
        case .storeFailure(_, let error): [error.message]
        }
    }

    /// The result as one JSON object (`ferry verify --json`); `nil` for a store that could not
    /// be checked.
    public var json: String? {
        switch self {
        case .archive(let path, let report):
            return Self.archiveJSON(path: path, ok: true, members: report.memberCount, records: report.recordCount, error: nil)
        case .archiveFailure(let path, let error):
            return Self.archiveJSON(path: path, ok: false, members: nil, records: nil, error: error)
        case .store(let path, let result):
            var object: JSONObject = ["store": .string(path), "ok": .bool(result.isIntact), "records": result.recordCount.json,
                                      "zones": result.zoneCount.json, "journal": result.journalCount.json,
                                      "token": .string(result.token.description)]
            object.append(key: "problems", value: .array(result.problems.map(JSONValue.string)))
            return JSONValue.object(object).compactText
        case .storeFailure:
            return nil
        }
    }

    private static func archiveJSON(path: String, ok: Bool, members: Int?, records: Int?, error: (any Error)?) -> String {
        var object: JSONObject = ["archive": .string(path), "ok": .bool(ok)]
        if let members { object.append(key: "members", value: members.json) }
        if let records { object.append(key: "records", value: records.json) }
        if let failure = error as? ArchiveError {
            object.append(key: "code", value: .string(failure.code.rawValue))
            if let member = failure.member { object.append(key: "member", value: .string(member)) }
            if let offset = failure.offset { object.append(key: "offset", value: .number(JSONNumber(Int64(offset)))) }
            object.append(key: "message", value: .string(failure.description))
        } else if let error {
            object.append(key: "message", value: .string(String(describing: error)))
        }
        return JSONValue.object(object).compactText
    }
}
