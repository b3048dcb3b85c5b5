import FerryArchive
import FerryIO
import FerryJSON
import FerryPipeline
import FerryStore
import FerryXML

extension InputRecognizer {
    /// Opens `path` as one record reader, whatever it holds: a folder as its files one after the
    /// other, in the order ``InputPaths/expand(_:onNote:)`` lists them (a conversion's order),
    /// telling `onNote` what the folder's listing skipped; a store, an archive, XML or NDJSON
    /// (gzip or not) as ``open(_:)`` recognizes it.
    ///
    /// - Throws: ``FerryError`` as ``open(_:)`` does; errors of reading come from the reader.
    public func openReader(_ path: String, policy: RecordErrorPolicy = .fail,
                           onNote: ((String) -> Void)? = nil) throws(FerryError) -> any RecordReader {
        guard path != "-" && FileSystem.isDirectory(path) else { return try openFileReader(path, policy: policy) }
        let files = try InputPaths.expand([path], onNote: onNote)
        return FolderRecordReader(name: path, files: files) { file in try self.openFileReader(file, policy: policy) }
    }

    /// Opens one input (not a folder) as a record reader.
    private func openFileReader(_ path: String, policy: RecordErrorPolicy) throws(FerryError) -> any RecordReader {
        try FerryError.catching {
            switch try recognize(path, for: .reader) {
            case .store(_, let reader):
                return reader
            case .archive(_, let source):
                return ArchiveRecordReader(try ArchiveReader(source: source, configuration: archiveConfiguration, policy: policy))
            case .xml(_, let source):
                return XMLRecordReader(source: source, policy: policy)
            case .ndjson(_, let source):
                return NDJSONReader(source: source, policy: policy, configuration: .init(maximumLineBytes: configuration.maximumLineBytes))
            }
        }
    }

    /// How archives are read: their records members with this recognizer's line limit.
    var archiveConfiguration: ArchiveReader.Configuration {
        ArchiveReader.Configuration(records: NDJSONReader.Configuration(maximumLineBytes: configuration.maximumLineBytes))
    }
}
