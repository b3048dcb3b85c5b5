import FerryPipeline
import FerryRecords

/// The records of a folder's files, each file opened when the one before it ends.
final class FolderRecordReader: RecordReader {
    private let name: String
    private var files: IndexingIterator<[String]>
    private let open: (String) throws -> any RecordReader
    private var current: (any RecordReader)?
    /// Indexes, records, rejects, bytes and listings of the files finished.
    private var indexBase = 0, recordBase = 0, rejectedBase = 0, bytesBase = 0
    private var listingsBefore: [ZoneListing] = []
    var onReject: ((any Error) -> Void)?

    init(name: String, files: [String], open: @escaping (String) throws -> any RecordReader) {
        self.name = name
        self.files = files.makeIterator()
        self.open = open
    }

    var sourceName: String { current?.sourceName ?? name }
    var recordIndex: Int { indexBase + (current?.recordIndex ?? 0) }
    var recordCount: Int { recordBase + (current?.recordCount ?? 0) }
    var rejectedCount: Int { rejectedBase + (current?.rejectedCount ?? 0) }
    var bytesRead: Int { bytesBase + (current?.bytesRead ?? 0) }
    var zoneListings: [ZoneListing] { listingsBefore + (current?.zoneListings ?? []) }
    var currentDatabase: String? { current?.currentDatabase }
    var recordLine: Int? { current?.recordLine }

    func next() throws -> Record? {
        while true {
            if let reader = current {
                if let record = try reader.next() { return record }
                indexBase += reader.recordIndex
                recordBase += reader.recordCount
                rejectedBase += reader.rejectedCount
                bytesBase += reader.bytesRead
                listingsBefore += reader.zoneListings
                current = nil
            }
            guard let path = files.next() else { return nil }
            let reader = try open(path)
            reader.onReject = onReject
            current = reader
        }
    }
}
