import FerryIO
import FerryStore

/// An input opened and recognized by ``InputRecognizer``: what it is, with what reads it, none
/// of its bytes consumed.
public enum OpenedInput {
    /// NDJSON or saved CKWS responses: the decompressed bytes (for a small gzip file holding one
    /// document, the file itself, which decoding threads inflate whole).
    case ndjson(path: String, source: any ByteSource)
    /// An XML document: the decompressed bytes.
    case xml(path: String, source: any ByteSource)
    /// A tar stream, decompressed (``ArchiveReader`` reads it).
    case archive(path: String, source: any ByteSource)
    /// A Ferry store, opened for reading.
    case store(path: String, reader: StoreRecordReader)

    /// The path the input was opened from (`-` for standard input).
    public var path: String {
        switch self {
        case .ndjson(let path, _), .xml(let path, _), .archive(let path, _), .store(let path, _): path
        }
    }

    /// The format the input is read as.
    public var format: RecordFormat {
        switch self {
        case .ndjson: .ndjson
        case .xml: .xml
        case .archive: .archive
        case .store: .store
        }
    }
}
