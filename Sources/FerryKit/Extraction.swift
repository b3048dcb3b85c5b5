import FerryArchive
import FerryInternals
import FerryRecords

/// An archive's members written into a folder, safely, as `ferry extract` writes them: nothing
/// outside the folder, every member checked as ``Verification`` checks it while staged, and
/// moved into place only once all of it checked out.
public struct Extraction: Sendable {
    /// The archive (`-` is standard input).
    public var archive: String
    /// The folder (made when missing; its parent must exist).
    public var directory: String
    /// Limits for reading an untrusted archive.
    public var configuration: ArchiveReader.Configuration

    /// An extraction of `archive` into `directory`.
    public init(archive: String, directory: String, configuration: ArchiveReader.Configuration = .init()) {
        self.archive = archive
        self.directory = directory
        self.configuration = configuration
    }

    /// Extracts, and returns what was written.
    ///
    /// - Throws: ``FerryError`` for an archive that cannot be read or fails its checks; no member
    ///   is then left in the folder (nor the folder, when the extraction made it).
    public func run() throws(FerryError) -> Summary {
        try FerryError.catching {
            let source = try InputRecognizer(configuration: .init(format: .archive)).openFile(archive)
            let reader = try ArchiveReader(source: source, configuration: configuration)
            let written = try reader.extract(to: directory)
            return Summary(archive: archive, directory: directory, memberCount: written,
                           hasManifest: reader.manifestPlacement != .notRead, recordCount: reader.recordCount)
        }
    }

    /// What an extraction wrote, with the summary `ferry extract` prints.
    public struct Summary: Sendable {
        /// The archive.
        public var archive: String
        /// The folder.
        public var directory: String
        /// Members written.
        public var memberCount: Int
        /// Whether the archive had a manifest that vouched for its members.
        public var hasManifest: Bool
        /// Records in its records members.
        public var recordCount: Int

        /// `extracted N members (…) into DIRECTORY`.
        public var line: String {
            let checked = hasManifest
                ? "\(Plural.count(recordCount, "record")), every member checked against the manifest"
                : "no manifest: nothing vouches for them beyond an intact archive"
            return "extracted \(Plural.count(memberCount, "member")) (\(checked)) into \(directory)"
        }

        /// The same as one JSON object: archive, directory, members, manifest, records.
        public var json: String {
            JSONValue.object(["archive": .string(archive), "directory": .string(directory), "members": memberCount.json,
                              "manifest": .bool(hasManifest), "records": recordCount.json]).compactText
        }
    }
}
