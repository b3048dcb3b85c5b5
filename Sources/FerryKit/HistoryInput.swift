import FerryArchive
import FerryIO
import FerryInternals

/// A history input as a replay opens it: a file's bytes, decompressed, or an archive, read as
/// the history members it holds (``ArchiveReader/nextHistoryMember()``). Both are recognized by
/// content (``InputRecognizer``), as a conversion recognizes them.
public enum HistoryInput {
    /// A change log or saved change responses; a small gzipped response is handed to the decoding
    /// threads whole.
    case file(any ByteSource)
    /// An archive (a tar stream, gzip-compressed or not).
    case archive(ArchiveReader)

    /// Opens the history at `path` (`-` is standard input).
    ///
    /// - Throws: ``FerryError`` when it cannot be opened, is empty though named for gzip or an
    ///   archive, or its archive cannot be started.
    public init(path: String) throws(FerryError) {
        self = try FerryError.catching {
            switch try InputRecognizer().recognize(path, for: .history) {
            case .archive(_, let source): .archive(try ArchiveReader(source: source))
            case .ndjson(_, let source), .xml(_, let source): .file(source)
            case .store(let path, _): throw FerryError.data("\(path): a store is not a history")
            }
        }
    }

    /// Whether the file at `path` holds an archive, by content (its first bytes, decompressed).
    public static func isArchive(_ path: String) throws(FerryError) -> Bool {
        try FerryError.catching {
            if case .archive = try InputRecognizer().recognize(path, for: .history) { return true }
            return false
        }
    }

    /// Opens a history that must be a file, for the decoding threads of a replay into a store
    /// (which checked beforehand that it is not an archive).
    public static func openFile(_ path: String) throws(FerryError) -> any ByteSource {
        switch try HistoryInput(path: path) {
        case .file(let source):
            return source
        case .archive:
            throw .data("\(path): expected a change log or saved CloudKit change responses, found an archive")
        }
    }

    /// What reading an archive skipped, as a sentence: its hidden members and those that are not
    /// record files by name (a folder's reading would try those), or `nil` when it skipped none.
    public static func skippedMembersNote(_ reader: ArchiveReader) -> String? {
        let skipped = reader.skippedMembers
        guard !skipped.isEmpty else { return nil }
        let shown = skipped.prefix(3).map(\.path).joined(separator: ", ") + (skipped.count > 3 ? ", …" : "")
        return "\(reader.name): skipped \(Plural.count(skipped.count, "member")) (\(shown)): "
            + (skipped.count == 1 ? skipped[0].reason : "hidden, or not record files by name (.ndjson, .jsonl, .json, each optionally .gz)")
    }
}
