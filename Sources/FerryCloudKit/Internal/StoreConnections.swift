import FerryIO
import FerryStore

/// The connections of a service to its store: readers, each used by one request at a time and
/// kept for the next (WAL: they read the last committed state while the writer writes), and one
/// writer that requests take in turn.
///
/// A `RecordStore` is one SQLite connection used by one thread at a time: this class is what
/// makes it so. Readers are opened as requests need them (at most ``maximumIdleReaders`` kept).
final class StoreConnections: @unchecked Sendable {
    let path: String
    let configuration: RecordStore.Configuration
    let isReadOnly: Bool
    private let lock = Lock()
    private var idle: [RecordStore] = []
    private let writerLock = Lock()
    private var writer: RecordStore?
    static let maximumIdleReaders = 16

    init(path: String, readOnly: Bool, configuration: RecordStore.Configuration) throws {
        self.path = path
        self.isReadOnly = readOnly
        self.configuration = configuration
        // The writer first (it migrates an older store), then a reader, so that a store that
        // cannot be opened fails here.
        if !readOnly {
            writer = try RecordStore(path: path, access: .readWrite, configuration: configuration)
        }
        idle.append(try RecordStore(path: path, access: .readOnly, configuration: configuration))
    }

    /// Runs `body` with a reader of its own.
    func read<T>(_ body: (RecordStore) throws -> T) throws -> T {
        let store = try lock.withLock { idle.popLast() } ?? RecordStore(path: path, access: .readOnly, configuration: configuration)
        defer {
            lock.withLock { if idle.count < Self.maximumIdleReaders { idle.append(store) } }
        }
        return try body(store)
    }

    /// Runs `body` with the writer, no other request writing meanwhile; `nil` store when read-only.
    func write<T>(_ body: (RecordStore) throws -> T) throws -> T {
        try writerLock.withLock {
            guard let writer else { throw CloudKitError(.accessDenied, "the store is served read-only: writes are refused") }
            return try body(writer)
        }
    }
}
