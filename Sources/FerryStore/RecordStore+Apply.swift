import FerryChangeLog
import FerryRecords

extension RecordStore {
    /// Applies `changes` to the zones of `database` in one transaction, through the one replay
    /// core (``StoreReplayer``'s rules: a save replaces the record, a delete removes it, a zone
    /// saved is made live, a zone deleted or purged loses its records), journaling each change,
    /// and returns the store's token after them: ``changes(since:database:_:)`` from the token
    /// before returns exactly these changes.
    ///
    /// Either every change is applied or, on a throw, none is.
    ///
    /// - Throws: ``StoreError``: ``StoreError/Code-swift.enum/invalidArgument`` on a read-only
    ///   connection or for an unknown database, ``StoreError/Code-swift.enum/busy`` when another
    ///   writer holds the store longer than ``Configuration/busyTimeout``.
    @discardableResult
    public func apply(_ changes: [ChangeEvent], database: String) throws -> StoreToken {
        guard access == .readWrite else {
            throw StoreError(.invalidArgument, "expected a store opened for writing to apply changes, found one opened read-only", path: path)
        }
        let databaseID = try StoreCodec.databaseID(database)
        try StoreWriter.beginWriting(self)
        do {
            // Kept between batches; what it cached is forgotten, as another process may have written.
            let mutator = try batchMutator ?? StoreMutator(connection: connection, path: path)
            batchMutator = mutator
            mutator.forgetCaches()
            try mutator.resumeSequence()
            let backend = StoreReplayBackend(mutator: mutator, database: databaseID, restoresJournal: false, commitsEachCheckpoint: false)
            let core = ReplayCore(backend: backend, options: .init())
            let encoder = StoreRowEncoder()
            for (offset, change) in changes.enumerated() {
                try core.take(ReplayChange(change, encoder: encoder, cascade: false, defaultZone: nil), position: offset + 1)
            }
            try core.finish()
            try mutator.flush()
            try connection.execute("COMMIT")
            return StoreToken(storeID: storeID, sequence: mutator.nextSeq - 1)
        } catch {
            if !connection.isAutocommit { try? connection.execute("ROLLBACK") }
            throw error
        }
    }
}

extension StoreZone {
    /// A zone described by its parts (a zone a service lists before the store holds it: the
    /// default zone of a database).
    package init(describing zoneID: ZoneID, database: String, syncToken: String? = nil, moreComing: Bool = false, isDeleted: Bool = false,
                 recordCount: Int = 0, changeToken: StoreToken) {
        self.database = database
        self.zoneID = zoneID
        self.syncToken = syncToken
        self.moreComing = moreComing
        self.isDeleted = isDeleted
        self.recordCount = recordCount
        self.changeToken = changeToken
    }
}
