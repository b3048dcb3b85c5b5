/// How JSON record input is cut and what it may hold: the configuration of ``JSONFramer`` (the
/// one framer) and of every reader on it — ``JSONRecordSource`` (its parallel reader), replay's
/// history reader — so that each limit is named and defaulted once.
///
/// Threads are not here: a source decodes on the threads its pipeline offers
/// (``RecordPipeline/threads``).
public struct JSONFraming: Sendable {
    /// Bytes per chunk of lines (whole lines; a longer line makes a longer chunk).
    public var chunkSize: Int
    /// The longest line accepted (CloudKit's records are at most 1 MB; the default leaves room).
    public var maximumLineBytes: Int
    /// The largest input read as documents (pretty-printed responses; they are read whole).
    public var maximumDocumentBytes: Int
    /// The largest document read from an input of unknown size (a pipe, a gzip stream, an
    /// archive member), which is held in memory whole: no more than a line, so that an endless
    /// document is refused as early as an endless line.
    public var maximumStreamedDocumentBytes: Int { min(maximumDocumentBytes, maximumLineBytes) }
    /// Deepest JSON nesting accepted.
    public var maximumDepth: Int
    /// Whether a source that can be mapped (a regular file) is read in place rather than copied
    /// in with `read` (on Linux; elsewhere inputs are always read). Units are then cut from the
    /// mapping, and its pages are given back behind the reader, so memory stays bounded as with
    /// `read`. A file truncated while it is mapped raises `SIGBUS` (the CLI turns that into an
    /// error; see ``TemporaryFiles``); one modified in place is reported before the read ends.
    public var mapsInput: Bool
    /// Files smaller than this are read even when ``mapsInput``: for a small file, mapping,
    /// faulting in and unmapping costs more than the copy `read` makes.
    public var minimumMappedSize: Int
    /// Response documents at least this large are cut into runs of their records (about
    /// ``chunkSize`` each), so that one large response is decoded on every worker.
    public var minimumSplitSize: Int
    /// Whether an input that a worker can read on its own (``WholeInput``: a small gzip file) is
    /// handed out whole, as one ``InputUnit/Kind/whole`` unit, unread.
    package var passesWholeInputs = false

    public init(chunkSize: Int = 1 << 20, maximumLineBytes: Int = 64 << 20, maximumDocumentBytes: Int = 1 << 30,
                maximumDepth: Int = 512, mapsInput: Bool = true, minimumMappedSize: Int = 8 << 20,
                minimumSplitSize: Int = 8 << 20) {
        self.minimumSplitSize = minimumSplitSize
        self.chunkSize = max(1 << 12, chunkSize)
        self.maximumLineBytes = maximumLineBytes
        self.maximumDocumentBytes = maximumDocumentBytes
        self.maximumDepth = maximumDepth
        self.mapsInput = mapsInput
        self.minimumMappedSize = minimumMappedSize
    }
}
