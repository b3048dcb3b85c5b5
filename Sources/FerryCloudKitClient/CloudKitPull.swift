#if CloudKit
import FerryChangeLog
import FerryCloudKit
import FerryIO
import FerryKit
import FerryPredicate
import FerryRecords
import FerryStore
import Foundation

/// One pull of a CloudKit database into a Ferry output, as `ferry pull` runs it.
///
/// - **Changes** (``Mode/changes``): `changes/database` after the store's database token, then
///   `changes/zone` for every changed zone after its token, every page, each page replayed into
///   the store through the one replay core and committed with its token. An interrupted pull
///   continues from its last committed page; a second pull fetches only what changed since.
/// - **Tokens only** (``Mode/tokensOnly``): the same fetches with `desiredKeys: []`, keeping only
///   the tokens (the bootstrap before following changes).
/// - **Query** (``Mode/query(_:)``): `records/query`, every page; a predicate CloudKit cannot take
///   as one query (OR, long lists) is split into queries CloudKit accepts, their results merged
///   by record name.
/// - **Names** (``Mode/names(_:)``): `records/lookup` in batches of 200.
///
/// Changes and tokens go to a store (where tokens live); another output (NDJSON, XML, an
/// archive) is written from a working store beside it, `OUT.pull.sqlite`, removed once the
/// output is complete. Queries and lookups stream into any output.
///
/// ```swift
/// let pull = CloudKitPull(configuration: .init(
///     client: .init(endpoint: "http://127.0.0.1:8080", container: "iCloud.com.example.app", database: "private"),
///     mode: .changes, output: "app.sqlite"))
/// let summary = try await pull.run()
/// ```
public final class CloudKitPull {
    /// What a query pull asks for.
    public struct Query: Sendable {
        /// The record type.
        public var recordType: String
        /// An NSPredicate the records must match (`nil`: every record of the type).
        public var predicate: String?
        /// Sort keys.
        public var sortBy: [CloudKitQuery.Sort]
        /// The fields to fetch (`nil`: every field).
        public var desiredKeys: [String]?
        /// The zone to query (`nil`: the default zone), or every zone with ``zoneWide``.
        public var zoneID: ZoneID?
        /// Query every zone.
        public var zoneWide: Bool

        public init(recordType: String, predicate: String? = nil, sortBy: [CloudKitQuery.Sort] = [], desiredKeys: [String]? = nil,
                    zoneID: ZoneID? = nil, zoneWide: Bool = false) {
            self.recordType = recordType
            self.predicate = predicate
            self.sortBy = sortBy
            self.desiredKeys = desiredKeys
            self.zoneID = zoneID
            self.zoneWide = zoneWide
        }
    }

    /// Sort keys from a list such as `sentAt,-count` (`-`: descending).
    public static func sortKeys(parsing text: String) -> [CloudKitQuery.Sort] {
        text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.map { name in
            name.hasPrefix("-") ? CloudKitQuery.Sort(fieldName: String(name.dropFirst()), ascending: false) : CloudKitQuery.Sort(fieldName: name)
        }
    }

    /// The record names of a file, one per line (blank lines skipped).
    public static func recordNames(fromFile path: String) throws(CloudKitClientError) -> [String] {
        do {
            return try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        } catch {
            throw CloudKitClientError(.data, "\(path): cannot read the record names (\(error.localizedDescription))")
        }
    }

    /// What is fetched.
    public enum Mode: Sendable {
        case changes
        case tokensOnly
        case query(Query)
        case names([String], zoneID: ZoneID?)
    }

    /// What to pull, from where, into what.
    public struct Configuration: Sendable {
        /// The database to pull from.
        public var client: CloudKitClient.Configuration
        /// What is fetched.
        public var mode: Mode
        /// The output: a store, NDJSON, XML or an archive, by its name or ``format``.
        public var output: String
        /// The output's format when its name does not say.
        public var format: RecordFormat?
        /// Records per page asked of CloudKit (at most 200).
        public var pageSize: Int
        /// A folder the assets' bytes are downloaded to, one file per checksum
        /// (``CloudKitClient/assetFileName(checksum:)``); `nil`: none are.
        public var assets: String?

        public init(client: CloudKitClient.Configuration, mode: Mode = .changes, output: String, format: RecordFormat? = nil,
                    pageSize: Int = 200, assets: String? = nil) {
            self.client = client
            self.mode = mode
            self.output = output
            self.format = format
            self.pageSize = pageSize
            self.assets = assets
        }
    }

    /// What a pull did.
    public struct Summary: Sendable {
        /// Records written (saved or replaced).
        public var records = 0
        /// Deletions applied (changes).
        public var deleted = 0
        /// Pages fetched.
        public var pages = 0
        /// Zones whose changes were fetched.
        public var zones = 0
        /// Queries sent (a split predicate sends several).
        public var queries = 0
        /// Assets downloaded (``Configuration/assets``), and those already there.
        public var assetsDownloaded = 0, assetsPresent = 0
        /// Bytes of the assets downloaded.
        public var assetBytes = 0
        /// The client's requests, retries and waits.
        public var client = CloudKitClient.Statistics()
        /// Seconds the pull took.
        public var seconds = 0.0

        /// One line for a terminal.
        public var line: String {
            var text = "pulled \(records) record\(records == 1 ? "" : "s")"
            if deleted > 0 { text += ", \(deleted) deletion\(deleted == 1 ? "" : "s")" }
            text += " in \(pages) page\(pages == 1 ? "" : "s")"
            if zones > 0 { text += " from \(zones) zone\(zones == 1 ? "" : "s")" }
            if assetsDownloaded + assetsPresent > 0 { text += ", \(assetsDownloaded) asset\(assetsDownloaded == 1 ? "" : "s") downloaded (\(assetsPresent) already there)" }
            text += "; \(client.requests) request\(client.requests == 1 ? "" : "s")"
            if client.retries > 0 {
                text += ", \(client.retries) retr\(client.retries == 1 ? "y" : "ies") (\(client.throttled) throttled, "
                    + "\(client.unavailable) unavailable; waited \(String(format: "%.1f", client.secondsWaited)) s)"
            }
            return text + String(format: " in %.2f s", seconds)
        }

        /// The summary as one JSON object.
        public var json: String {
            var out = JSONOutput(capacity: 512)
            out.append("{\"records\":"); out.appendInteger(Int64(records))
            out.append(",\"deleted\":"); out.appendInteger(Int64(deleted))
            out.append(",\"pages\":"); out.appendInteger(Int64(pages))
            out.append(",\"zones\":"); out.appendInteger(Int64(zones))
            out.append(",\"queries\":"); out.appendInteger(Int64(queries))
            out.append(",\"assetsDownloaded\":"); out.appendInteger(Int64(assetsDownloaded))
            out.append(",\"assetsPresent\":"); out.appendInteger(Int64(assetsPresent))
            out.append(",\"assetBytes\":"); out.appendInteger(Int64(assetBytes))
            CloudKitPull.appendClientStatistics(client, into: &out)
            out.append(",\"seconds\":"); out.appendDouble((seconds * 1000).rounded() / 1000)
            out.append("}")
            return String(decoding: out.bytes, as: UTF8.self)
        }
    }

    /// What to pull, from where, into what.
    public let configuration: Configuration
    /// The client sending the requests.
    public let client: CloudKitClient
    /// Told after each page of what has been done so far.
    public var onProgress: ((Summary) -> Void)?
    private var summary = Summary()

    public init(configuration: Configuration) {
        self.configuration = configuration
        client = CloudKitClient(configuration: configuration.client)
    }

    /// The output's format, from ``Configuration/format`` or its name.
    var outputFormat: RecordFormat {
        get throws(CloudKitClientError) {
            do {
                return try RecordOutput.format(of: configuration.output, declared: configuration.format)
            } catch {
                throw CloudKitClientError(.usage, error.message)
            }
        }
    }

    /// Pulls, writes the output, and returns what was done.
    ///
    /// - Throws: ``CloudKitClientError``: `usage` for options that cannot work, `server`,
    ///   `retriesExhausted` or `transport` for requests that failed, `data` for output that
    ///   could not be written (a store keeps every page committed before the failure; another
    ///   output is left as it was).
    @discardableResult
    public func run() async throws(CloudKitClientError) -> Summary {
        let clock = Stopwatch()
        try configuration.client.credentials.check(database: configuration.client.database)
        guard (1...200).contains(configuration.pageSize) else {
            throw CloudKitClientError(.usage, "expected a page size from 1 to 200, found \(configuration.pageSize)")
        }
        switch configuration.mode {
        case .changes, .tokensOnly:
            let store = try outputFormat == .store ? configuration.output : configuration.output + ".pull.sqlite"
            try await pullChanges(into: store)
            if configuration.assets != nil { try noteAssets(inStore: store) }
            if store != configuration.output {
                try convert(store, to: configuration.output)
                for path in [store, store + "-wal", store + "-shm"] { try? FileManager.default.removeItem(atPath: path) }
            }
        case .query(let query):
            try await pullQuery(query)
        case .names(let names, let zoneID):
            try await pullNames(names, zoneID: zoneID)
        }
        try await downloadAssets()
        summary.client = client.statistics
        summary.seconds = clock.seconds
        return summary
    }

    private func progress() {
        guard let onProgress else { return }
        var current = summary
        current.client = client.statistics
        onProgress(current)
    }

    // MARK: Changes

    private var database: String { configuration.client.database }

    private func pullChanges(into path: String) async throws(CloudKitClientError) {
        guard database != "public" else {
            throw CloudKitClientError(.usage, "the public database has no change feeds (CloudKit serves changes/database and changes/zone for the private and shared databases); pull it with --type")
        }
        let tokensOnly = if case .tokensOnly = configuration.mode { true } else { false }
        // The store is made first, so that each page is committed with its token as it comes
        // (a new store staged whole would lose every page to an interruption).
        var zoneTokens: [ZoneKey: String] = [:]
        var databaseToken: String?
        let madeHere = !FileSystem.exists(path)
        do {
            if madeHere { _ = try RecordStore.create(at: path) }
            let store = try RecordStore(path: path)
            for zone in try store.zones() where zone.database == database && !zone.isDeleted {
                if let token = zone.syncToken { zoneTokens[ZoneKey(zone.zoneID)] = token }
            }
            databaseToken = try store.databaseSyncToken(database)
        } catch {
            throw CloudKitClientError(.data, "\(path): \(error)")
        }
        let replayer: StoreReplayer
        do {
            replayer = try StoreReplayer(path: path, configuration: .init(database: database, transaction: .checkpoint))
        } catch {
            throw CloudKitClientError(.data, "\(path): \(error)")
        }
        do {
            var more = true
            while more {
                let page = try await client.databaseChanges(CloudKitDatabaseChangesRequest(syncToken: databaseToken))
                summary.pages += 1
                for entry in page.entries {
                    guard let zoneID = entry.zoneID else { continue }
                    if entry.isDeleted || entry.isPurged {
                        try apply(entry.isPurged ? .zonePurged(zoneID) : .zoneDeleted(zoneID), to: replayer, path)
                        continue
                    }
                    try await pullZone(zoneID, after: zoneTokens[ZoneKey(zoneID)], tokensOnly: tokensOnly, into: replayer, path)
                }
                more = page.moreComing == true
                if let token = page.syncToken {
                    databaseToken = token
                    try apply(.checkpoint(.init(zoneID: nil, syncToken: token, moreComing: more)), to: replayer, path)
                }
            }
            try replayer.finish()
        } catch {
            try? replayer.finish()
            // A store this pull made and committed nothing to is not left behind.
            if madeHere && replayer.eventCount == 0 {
                for file in [path, path + "-wal", path + "-shm"] { try? FileManager.default.removeItem(atPath: file) }
            }
            throw error as? CloudKitClientError ?? CloudKitClientError(.data, "\(path): \(error)")
        }
        summary.records = replayer.statistics.created + replayer.statistics.modified
        summary.deleted = replayer.statistics.deleted
    }

    private func apply(_ event: ChangeEvent, to replayer: StoreReplayer, _ path: String) throws(CloudKitClientError) {
        do {
            try replayer.apply(event)
        } catch {
            throw CloudKitClientError(.data, "\(path): \(error)")
        }
    }

    /// Every page of one zone's changes after `token`.
    private func pullZone(_ zoneID: ZoneID, after token: String?, tokensOnly: Bool, into replayer: StoreReplayer,
                          _ path: String) async throws(CloudKitClientError) {
        summary.zones += 1
        var token = token
        var more = true
        while more {
            let request = CloudKitZoneChangesRequest(zones: [CloudKitRecordChangesRequest(
                zoneID: zoneID, syncToken: token, resultsLimit: configuration.pageSize, desiredKeys: tokensOnly ? [] : nil)])
            let (page, body) = try await client.zoneChanges(request)
            summary.pages += 1
            guard let entry = page.entries.first(where: { $0.zoneID.map(ZoneKey.init) == ZoneKey(zoneID) }) ?? page.entries.first else {
                throw CloudKitClientError(.invalidResponse, "changes/zone: expected an entry for zone \(zoneID.zoneName), found none")
            }
            if let error = entry.serverError {
                throw CloudKitClientError(.server, "changes/zone: zone \(zoneID.zoneName): \(error.serverErrorCode): \(error.reason ?? "")")
            }
            more = entry.moreComing == true
            if tokensOnly {
                if let next = entry.syncToken {
                    try apply(.zoneSaved(zoneID), to: replayer, path)
                    try apply(.checkpoint(.init(zoneID: zoneID, syncToken: next, moreComing: more)), to: replayer, path)
                }
            } else {
                do {
                    try replayer.apply(MemorySource(body, name: "changes/zone of \(zoneID.zoneName)"))
                } catch {
                    throw CloudKitClientError(.data, "\(path): \(error)")
                }
            }
            guard let next = entry.syncToken, next != token || !more else {
                if more { throw CloudKitClientError(.invalidResponse, "changes/zone: moreComing without a new syncToken for zone \(zoneID.zoneName)") }
                break
            }
            token = next
            progress()
        }
    }

    private func convert(_ store: String, to output: String) throws(CloudKitClientError) {
        do {
            let conversion = Conversion(configuration: .init(
                inputs: [store], output: output, writing: .init(format: configuration.format, database: database)))
            _ = try conversion.run()
        } catch {
            throw CloudKitClientError(.data, error.message)
        }
    }

    // MARK: Queries and lookups

    private func openOutput() throws(CloudKitClientError) -> RecordOutput {
        do {
            return try RecordOutput.open(configuration.output, configuration: .init(
                format: configuration.format, database: database, storeMode: .replace))
        } catch {
            throw CloudKitClientError(error.kind == .usage ? .usage : .data, error.message)
        }
    }

    private func write(_ record: Record, to output: RecordOutput) throws(CloudKitClientError) {
        if configuration.assets != nil { noteAssets(of: record) }
        do {
            try output.writer.write(record, database: database)
        } catch {
            throw CloudKitClientError(.data, "\(configuration.output): \(error)")
        }
    }

    private func pullQuery(_ query: Query) async throws(CloudKitClientError) {
        // The queries CloudKit accepts whose union is the predicate, each as filterBy.
        var filters: [JSONValue?] = [nil]
        if let text = query.predicate {
            do {
                let predicate = try RecordPredicate(parsing: text)
                filters = try predicate.splitForCloudKit(.init(recordType: query.recordType)).map { try $0.cloudKitFilterBy() }
            } catch {
                throw CloudKitClientError(.usage, "--where: \(error)")
            }
        }
        let output = try openOutput()
        // Split queries can match a record twice: each is written once, the first time.
        var seen = Set<String>()
        let merges = filters.count > 1
        for filterBy in filters {
            summary.queries += 1
            var marker: String?
            repeat {
                let page = try await client.query(CloudKitQueryRequest(
                    query: CloudKitQuery(recordType: query.recordType, filterBy: filterBy, sortBy: query.sortBy),
                    zoneID: query.zoneID, resultsLimit: configuration.pageSize, continuationMarker: marker,
                    desiredKeys: query.desiredKeys, zoneWide: query.zoneWide))
                summary.pages += 1
                for entry in page.entries {
                    let record = try Self.record(entry, "records/query")
                    if merges {
                        let key = (record.zoneID?.zoneName ?? "") + "\u{0}" + (record.zoneID?.ownerRecordName ?? "") + "\u{0}" + record.recordName
                        guard seen.insert(key).inserted else { continue }
                    }
                    try write(record, to: output)
                    summary.records += 1
                }
                marker = page.continuationMarker
                progress()
            } while marker != nil
        }
        try finish(output)
    }

    private func pullNames(_ names: [String], zoneID: ZoneID?) async throws(CloudKitClientError) {
        let output = try openOutput()
        var start = 0
        while start < names.count {
            let batch = Array(names[start..<min(start + CloudKitModifyRequest.maximumOperations, names.count)])
            start += batch.count
            let page = try await client.lookup(CloudKitLookupRequest(recordNames: batch, zoneID: zoneID))
            summary.pages += 1
            for entry in page.entries {
                if case .error(let error) = entry.content, error.serverErrorCode == "NOT_FOUND" { continue }
                try write(try Self.record(entry, "records/lookup"), to: output)
                summary.records += 1
            }
            progress()
        }
        try finish(output)
    }

    private func finish(_ output: RecordOutput) throws(CloudKitClientError) {
        do {
            try output.finish()
        } catch {
            throw CloudKitClientError(.data, error.message)
        }
    }

    // MARK: Assets

    /// The assets to download, by file name.
    private var pendingAssets: [String: Asset] = [:]

    private func noteAssets(of record: Record) {
        func visit(_ value: FieldValue) {
            switch value {
            case .asset(let asset):
                if let checksum = asset.fileChecksum, asset.downloadURL != nil {
                    pendingAssets[CloudKitClient.assetFileName(checksum: checksum)] = asset
                }
            case .list(let items): items.forEach(visit)
            default: break
            }
        }
        for entry in record.fields ?? RecordFields() { visit(entry.field.value) }
    }

    private func noteAssets(inStore path: String) throws(CloudKitClientError) {
        do {
            let reader = try StoreRecordReader(store: try RecordStore(path: path))
            while let record = try reader.next() {
                noteAssets(of: record)
            }
        } catch {
            throw CloudKitClientError(.data, "\(path): \(error)")
        }
    }

    /// Downloads the noted assets not in the folder yet (a file of the right size is kept),
    /// each written whole or not at all.
    private func downloadAssets() async throws(CloudKitClientError) {
        guard let folder = configuration.assets, !pendingAssets.isEmpty else { return }
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw CloudKitClientError(.data, "\(folder): \(error)")
        }
        for name in pendingAssets.keys.sorted() {
            let asset = pendingAssets[name]!
            let path = folder + "/" + name
            if let size = asset.size, let attributes = try? FileManager.default.attributesOfItem(atPath: path),
               (attributes[.size] as? NSNumber)?.int64Value == size {
                summary.assetsPresent += 1
                continue
            }
            let bytes = try await client.downloadAsset(asset, fileName: name)
            do {
                let file = try OutputFile(path: path)
                try bytes.withUnsafeBytes { try file.write($0) }
                try file.commit()
            } catch {
                throw CloudKitClientError(.data, "\(path): \(error)")
            }
            summary.assetsDownloaded += 1
            summary.assetBytes += bytes.count
            progress()
        }
    }

    static func record(_ entry: RecordsResponse.Entry, _ operation: String) throws(CloudKitClientError) -> Record {
        switch entry.content {
        case .record(let record):
            return record
        case .error(let error):
            throw CloudKitClientError(.server, "\(operation): record \(error.recordName ?? "?"): \(error.serverErrorCode): \(error.reason ?? "")")
        case .invalid(let error):
            throw CloudKitClientError(.invalidResponse, "\(operation): \(error)")
        }
    }

    static func appendClientStatistics(_ client: CloudKitClient.Statistics, into out: inout JSONOutput) {
        out.append(",\"requests\":"); out.appendInteger(Int64(client.requests))
        out.append(",\"retries\":"); out.appendInteger(Int64(client.retries))
        out.append(",\"throttled\":"); out.appendInteger(Int64(client.throttled))
        out.append(",\"unavailable\":"); out.appendInteger(Int64(client.unavailable))
        out.append(",\"secondsWaited\":"); out.appendDouble((client.secondsWaited * 1000).rounded() / 1000)
        out.append(",\"secondsAsked\":"); out.appendDouble((client.secondsAsked * 1000).rounded() / 1000)
    }
}
#endif
