#if CloudKit
import FerryCloudKit
import FerryIO
import FerryKit
import FerryPipeline
import FerryRecords
import Foundation

/// One push of records (any input FerryKit reads: a store, NDJSON, XML, an archive) into a
/// CloudKit database, as `ferry push` runs it.
///
/// Zones the records name are created first when the database lacks them. Records are sent in
/// an order where a record's parent and the records its reference fields name (when they are
/// pushed too) come before it, in `records/modify` batches of at most 200 operations and a byte
/// budget. A request CloudKit refuses as too large is split in half and sent again. A record
/// CloudKit answers THROTTLED, TRY_AGAIN_LATER or ZONE_BUSY is sent again after its `retryAfter`;
/// CONFLICT (and EXISTS for `create`) follows ``ConflictPolicy``; every other refused record is
/// written to the rejects file with its `serverErrorCode`, so nothing is lost silently.
///
/// Ordering needs every record at hand: the push holds the input's records in memory.
public final class CloudKitPush {
    /// What to do with a record CloudKit answers CONFLICT (or EXISTS).
    public enum ConflictPolicy: String, Sendable, CaseIterable {
        /// Reject it and fail the push (exit 1) once every batch is sent.
        case fail
        /// Reject it and go on; the push succeeds.
        case skip
        /// Send it again with the forced operation (`forceUpdate`, `forceReplace`, `forceDelete`).
        case overwrite
    }

    /// What to push, where, and how.
    public struct Configuration: Sendable {
        /// The database to push into.
        public var client: CloudKitClient.Configuration
        /// The inputs.
        public var inputs: [String]
        /// The operation each record is sent with.
        public var operation: CloudKitModifyRequest.OperationType
        /// Send each batch atomically (custom zones only, as CloudKit).
        public var isAtomic: Bool
        /// Count what would be sent; send nothing.
        public var isDryRun: Bool
        /// What to do with CONFLICT and EXISTS.
        public var onConflict: ConflictPolicy
        /// Where refused records go, one JSON line each (`{"serverErrorCode", "reason", "record"}`).
        public var rejects: String?
        /// The most operations in one request (1–200).
        public var batchSize: Int
        /// The most bytes of records in one request.
        public var batchBytes: Int
        /// A folder of asset bytes, one file per checksum (what `ferry pull --assets` writes): an
        /// asset field whose checksum names a file there is uploaded before its record.
        public var assets: String?

        public init(client: CloudKitClient.Configuration, inputs: [String], operation: CloudKitModifyRequest.OperationType = .forceReplace,
                    isAtomic: Bool = false, isDryRun: Bool = false, onConflict: ConflictPolicy = .fail, rejects: String? = nil,
                    batchSize: Int = CloudKitModifyRequest.maximumOperations, batchBytes: Int = 1 << 20, assets: String? = nil) {
            self.client = client
            self.inputs = inputs
            self.operation = operation
            self.isAtomic = isAtomic
            self.isDryRun = isDryRun
            self.onConflict = onConflict
            self.rejects = rejects
            self.batchSize = batchSize
            self.batchBytes = batchBytes
            self.assets = assets
        }
    }

    /// What a push did.
    public struct Summary: Sendable {
        /// Records read from the inputs.
        public var records = 0
        /// Records CloudKit saved (or deleted, for the delete operations).
        public var saved = 0
        /// Records refused and written to the rejects file.
        public var rejected = 0
        /// Of those, CONFLICT or EXISTS.
        public var conflicts = 0
        /// Records sent again with the forced operation (``ConflictPolicy/overwrite``).
        public var overwritten = 0
        /// Zones created.
        public var zonesCreated = 0
        /// `records/modify` requests answered.
        public var batches = 0
        /// Batches split in half because CloudKit refused them as too large.
        public var splits = 0
        /// Records sent again after a per-record THROTTLED, TRY_AGAIN_LATER or ZONE_BUSY.
        public var recordRetries = 0
        /// Assets uploaded from ``Configuration/assets``, and their bytes.
        public var assetsUploaded = 0, assetBytes = 0
        /// The client's requests, retries and waits.
        public var client = CloudKitClient.Statistics()
        /// Seconds the push took.
        public var seconds = 0.0
        /// Whether nothing was sent (``Configuration/isDryRun``).
        public var isDryRun = false

        /// One line for a terminal.
        public var line: String {
            var text = isDryRun ? "would push \(records) record\(records == 1 ? "" : "s") in \(batches) batch\(batches == 1 ? "" : "es")"
                                : "pushed \(saved) of \(records) record\(records == 1 ? "" : "s") in \(batches) batch\(batches == 1 ? "" : "es")"
            if zonesCreated > 0 { text += ", \(zonesCreated) zone\(zonesCreated == 1 ? "" : "s") created" }
            if rejected > 0 { text += ", \(rejected) rejected (\(conflicts) conflict\(conflicts == 1 ? "" : "s"))" }
            if overwritten > 0 { text += ", \(overwritten) overwritten" }
            if splits > 0 { text += ", \(splits) split\(splits == 1 ? "" : "s")" }
            if assetsUploaded > 0 { text += ", \(assetsUploaded) asset\(assetsUploaded == 1 ? "" : "s") uploaded" }
            if client.retries + recordRetries > 0 {
                text += "; \(client.retries + recordRetries) retr\(client.retries + recordRetries == 1 ? "y" : "ies") (waited "
                    + String(format: "%.1f", client.secondsWaited) + " s)"
            }
            return text + String(format: " in %.2f s", seconds)
        }

        /// The summary as one JSON object.
        public var json: String {
            var out = JSONOutput(capacity: 512)
            out.append("{\"records\":"); out.appendInteger(Int64(records))
            out.append(",\"saved\":"); out.appendInteger(Int64(saved))
            out.append(",\"rejected\":"); out.appendInteger(Int64(rejected))
            out.append(",\"conflicts\":"); out.appendInteger(Int64(conflicts))
            out.append(",\"overwritten\":"); out.appendInteger(Int64(overwritten))
            out.append(",\"zonesCreated\":"); out.appendInteger(Int64(zonesCreated))
            out.append(",\"batches\":"); out.appendInteger(Int64(batches))
            out.append(",\"splits\":"); out.appendInteger(Int64(splits))
            out.append(",\"recordRetries\":"); out.appendInteger(Int64(recordRetries))
            out.append(",\"assetsUploaded\":"); out.appendInteger(Int64(assetsUploaded))
            out.append(",\"assetBytes\":"); out.appendInteger(Int64(assetBytes))
            CloudKitPull.appendClientStatistics(client, into: &out)
            out.append(",\"seconds\":"); out.appendDouble((seconds * 1000).rounded() / 1000)
            out.append(",\"dryRun\":"); out.append(isDryRun ? "true" : "false")
            out.append("}")
            return String(decoding: out.bytes, as: UTF8.self)
        }
    }

    /// What to push, where, and how.
    public let configuration: Configuration
    /// The client sending the requests.
    public let client: CloudKitClient
    /// Told after each batch of what has been done so far.
    public var onProgress: ((Summary) -> Void)?
    private var summary = Summary()
    private var rejectLines: [UInt8] = []

    public init(configuration: Configuration) {
        self.configuration = configuration
        client = CloudKitClient(configuration: configuration.client)
    }

    /// Pushes, writes the rejects file, and returns what was done.
    ///
    /// - Throws: ``CloudKitClientError``: `usage` for options that cannot work; `data` for input
    ///   that cannot be read, and, after every batch is sent and the rejects file written, for
    ///   records refused (other than conflicts skipped by policy); `server`, `retriesExhausted`
    ///   or `transport` for a request that failed as a whole (the records of the batches before
    ///   it are in CloudKit; a rerun with a forced operation gives the same result).
    @discardableResult
    public func run() async throws(CloudKitClientError) -> Summary {
        let clock = Stopwatch()
        try configuration.client.credentials.check(database: configuration.client.database)
        guard (1...CloudKitModifyRequest.maximumOperations).contains(configuration.batchSize) else {
            throw CloudKitClientError(.usage, "expected a batch size from 1 to \(CloudKitModifyRequest.maximumOperations), found \(configuration.batchSize)")
        }
        if let rejects = configuration.rejects, configuration.inputs.contains(rejects) {
            throw CloudKitClientError(.usage, "the rejects file \(rejects) is also an input")
        }
        let records = Self.ordered(try readInputs())
        summary.records = records.count
        summary.isDryRun = configuration.isDryRun
        // Zones first, then each zone's records in batches (the order within a zone kept).
        var zones: [ZoneKey: (ZoneID, [Record])] = [:]
        var zoneOrder: [ZoneKey] = []
        for record in records {
            let zoneID = record.zoneID ?? .default
            let key = ZoneKey(zoneID)
            if zones[key] == nil { zones[key] = (zoneID, []); zoneOrder.append(key) }
            zones[key]!.1.append(record)
        }
        if !configuration.isDryRun { try await createMissingZones(zoneOrder.map { zones[$0]!.0 }) }
        for key in zoneOrder {
            let (zoneID, zoneRecords) = zones[key]!
            for batch in batches(zoneRecords) {
                if configuration.isDryRun {
                    summary.batches += 1
                    continue
                }
                var records = batch
                if configuration.assets != nil {
                    for index in records.indices { records[index] = try await uploadingAssets(of: records[index]) }
                }
                try await send(records.map { operation(for: $0, forced: false) }, zoneID: zoneID)
                progress()
            }
        }
        try writeRejects()
        summary.client = client.statistics
        summary.seconds = clock.seconds
        let failed = summary.rejected - (configuration.onConflict == .skip ? summary.conflicts : 0)
        if failed > 0 {
            throw CloudKitClientError(.data, "\(failed) record\(failed == 1 ? " was" : "s were") refused"
                + (configuration.rejects.map { " (written to \($0))" } ?? "") + ": " + firstRejectReason
                + "\n" + summary.line)
        }
        return summary
    }

    private func progress() {
        guard let onProgress else { return }
        var current = summary
        current.client = client.statistics
        onProgress(current)
    }

    // MARK: Input

    /// Every record of the inputs, as read (stores, NDJSON, XML, archives).
    private func readInputs() throws(CloudKitClientError) -> [Record] {
        let collector = RecordCollector()
        do {
            let sources = RecordSources(paths: configuration.inputs)
            let pipeline = RecordPipeline(writer: collector)
            while let source = try sources.next() {
                do {
                    try source.run(into: pipeline)
                } catch {
                    throw FerryError(wrapping: error)
                }
            }
            do {
                _ = try pipeline.finish()
            } catch {
                throw FerryError(wrapping: error)
            }
        } catch let error as FerryError {
            throw CloudKitClientError(error.kind == .usage ? .usage : .data, error.message)
        } catch {
            throw CloudKitClientError(.data, "\(error)")
        }
        return collector.records
    }

    /// `records` with each record after its parent and the records its reference fields name,
    /// where those are pushed too; otherwise in input order (a cycle is broken where it closes).
    static func ordered(_ records: [Record]) -> [Record] {
        var index: [RecordID: Int] = [:]
        for (position, record) in records.enumerated() { index[record.id] = position }
        func targets(of record: Record) -> [Int] {
            let zone = record.zoneID ?? .default
            var found: [Int] = []
            func note(_ reference: Reference) {
                if let position = index[RecordID(recordName: reference.recordName, zoneID: reference.zoneID ?? zone)] { found.append(position) }
            }
            func visit(_ value: FieldValue) {
                switch value {
                case .reference(let reference): note(reference)
                case .list(let items): items.forEach(visit)
                default: break
                }
            }
            if let parent = record.parent { note(parent) }
            for entry in record.fields ?? RecordFields() { visit(entry.field.value) }
            return found
        }
        var state = [UInt8](repeating: 0, count: records.count)  // 0 new, 1 on the path, 2 placed
        var order: [Record] = []
        order.reserveCapacity(records.count)
        for start in records.indices where state[start] == 0 {
            // Depth first without recursion: a record is placed after everything it names.
            var stack: [(position: Int, pending: [Int])] = [(start, targets(of: records[start]))]
            state[start] = 1
            while !stack.isEmpty {
                if let next = stack[stack.count - 1].pending.popLast() {
                    if state[next] == 0 {
                        state[next] = 1
                        stack.append((next, targets(of: records[next])))
                    }
                    continue
                }
                let done = stack.removeLast().position
                state[done] = 2
                order.append(records[done])
            }
        }
        return order
    }

    // MARK: Zones

    private func createMissingZones(_ zoneIDs: [ZoneID]) async throws(CloudKitClientError) {
        let custom = zoneIDs.filter { $0.zoneName != ZoneID.defaultZoneName }
        guard !custom.isEmpty else { return }
        let existing = Set(try await client.listZones().entries.compactMap { $0.zoneID.map(ZoneKey.init) })
        let missing = custom.filter { !existing.contains(ZoneKey($0)) }
        var start = 0
        while start < missing.count {
            let batch = Array(missing[start..<min(start + CloudKitModifyRequest.maximumOperations, missing.count)])
            start += batch.count
            let answer = try await client.modifyZones(CloudKitZonesModifyRequest(operations: batch.map { .init(.create, zoneID: $0) }))
            for entry in answer.entries {
                if let error = entry.serverError {
                    throw CloudKitClientError(.server, "zones/modify: zone \(entry.zoneID?.zoneName ?? "?"): \(error.serverErrorCode): \(error.reason ?? "")")
                }
                summary.zonesCreated += 1
            }
        }
    }

    // MARK: Batches

    /// The record as sent: what CloudKit sets itself (the stamps, `deleted`) left out, and the
    /// change tag only where the operation checks it.
    private func operation(for record: Record, forced: Bool) -> CloudKitModifyRequest.Operation {
        var sent = record
        sent.created = nil
        sent.modified = nil
        sent.deleted = nil
        var type = configuration.operation
        if forced {
            switch type {
            case .create, .replace: type = .forceReplace
            case .update: type = .forceUpdate
            case .delete: type = .forceDelete
            case .forceUpdate, .forceReplace, .forceDelete: break
            }
        }
        switch type {
        case .update, .replace, .delete: break
        case .create, .forceUpdate, .forceReplace, .forceDelete: sent.recordChangeTag = nil
        }
        return .init(type, record: sent)
    }

    /// `records` cut into batches of at most ``Configuration/batchSize`` records and
    /// ``Configuration/batchBytes`` bytes of JSON (a record larger than the budget goes alone).
    private func batches(_ records: [Record]) -> [[Record]] {
        var result: [[Record]] = []
        var current: [Record] = []
        var bytes = 0
        for record in records {
            let size = RecordJSON.encodedString(record).utf8.count
            if !current.isEmpty && (current.count >= configuration.batchSize || bytes + size > configuration.batchBytes) {
                result.append(current)
                current = []
                bytes = 0
            }
            current.append(record)
            bytes += size
        }
        if !current.isEmpty { result.append(current) }
        return result
    }

    /// Sends one batch; splits it when CloudKit finds it too large; handles each record's answer.
    private func send(_ operations: [CloudKitModifyRequest.Operation], zoneID: ZoneID, attempt: Int = 1) async throws(CloudKitClientError) {
        let answer: RecordsResponse
        do {
            answer = try await client.modify(CloudKitModifyRequest(
                operations: operations, zoneID: zoneID, atomic: configuration.isAtomic && zoneID.zoneName != ZoneID.defaultZoneName))
        } catch where Self.isTooLarge(error) && operations.count > 1 {
            summary.splits += 1
            let half = operations.count / 2
            try await send(Array(operations[..<half]), zoneID: zoneID)
            try await send(Array(operations[half...]), zoneID: zoneID)
            return
        }
        summary.batches += 1
        guard answer.entries.count == operations.count else {
            throw CloudKitClientError(.invalidResponse, "records/modify: expected one answer per operation (\(operations.count)), found \(answer.entries.count)")
        }
        var again: [CloudKitModifyRequest.Operation] = []
        var retryAfter = 0.0
        var overwrite: [CloudKitModifyRequest.Operation] = []
        var atomicFailure = false
        for (operation, entry) in zip(operations, answer.entries) {
            switch entry.content {
            case .record:
                summary.saved += 1
            case .invalid(let error):
                reject(operation.record, code: "INVALID_RESPONSE", reason: "\(error)")
            case .error(let error):
                switch error.serverErrorCode {
                case "THROTTLED", "TRY_AGAIN_LATER", "ZONE_BUSY":
                    again.append(operation)
                    if let seconds = error.entry["retryAfter"]?.numberValue?.doubleValue { retryAfter = max(retryAfter, seconds) }
                case "ATOMIC_ERROR":
                    // Not applied because another record of the atomic batch failed: sent again
                    // with the batch's other good records once the failing ones are out.
                    again.append(operation)
                    atomicFailure = true
                case "CONFLICT", "EXISTS":
                    if configuration.onConflict == .overwrite {
                        overwrite.append(self.operation(for: operation.record, forced: true))
                    } else {
                        summary.conflicts += 1
                        reject(operation.record, code: error.serverErrorCode, reason: error.reason ?? "")
                    }
                default:
                    reject(operation.record, code: error.serverErrorCode, reason: error.reason ?? "")
                }
            }
        }
        if !overwrite.isEmpty {
            summary.overwritten += overwrite.count
            try await send(overwrite, zoneID: zoneID, attempt: attempt)
        }
        guard !again.isEmpty else { return }
        if atomicFailure && again.count == operations.count {
            // Nothing failed but the batch itself: nothing to take out; refuse rather than loop.
            for operation in again { reject(operation.record, code: "ATOMIC_ERROR", reason: "the atomic batch failed as a whole") }
            return
        }
        guard attempt < configuration.client.retry.maximumAttempts else {
            for operation in again { reject(operation.record, code: "THROTTLED", reason: "gave up after \(attempt) attempts") }
            return
        }
        summary.recordRetries += again.count
        let wait = configuration.client.retry.delay(afterAttempt: attempt, retryAfter: retryAfter > 0 ? retryAfter : nil,
                                                    unit: Double.random(in: 0...1))
        try? await Task.sleep(nanoseconds: UInt64(wait * 1e9))
        try await send(again, zoneID: zoneID, attempt: attempt + 1)
    }

    /// Whether CloudKit refused a request for its size (QUOTA_EXCEEDED 413, or a BAD_REQUEST
    /// saying the request is too large).
    static func isTooLarge(_ error: CloudKitClientError) -> Bool {
        guard error.code == .server, let server = error.server else { return false }
        if server.code == .quotaExceeded || error.status == 413 { return true }
        let reason = server.reason.lowercased()
        return server.code == .badRequest && (reason.contains("too large") || reason.contains("limit"))
    }

    // MARK: Assets

    /// Uploaded assets by checksum: a file's bytes go up once, whichever records name them.
    private var uploaded: [String: Asset] = [:]

    /// `record` with each asset whose bytes are in the assets folder uploaded and replaced by
    /// the receipt CloudKit gave.
    private func uploadingAssets(of record: Record) async throws(CloudKitClientError) -> Record {
        guard let folder = configuration.assets, var fields = record.fields else { return record }
        func upload(_ asset: Asset, field: String) async throws(CloudKitClientError) -> Asset? {
            guard let checksum = asset.fileChecksum else { return nil }
            if let done = uploaded[checksum] { return done }
            let path = folder + "/" + CloudKitClient.assetFileName(checksum: checksum)
            guard let data = FileManager.default.contents(atPath: path) else { return nil }
            let bytes = [UInt8](data)
            let stored = try await client.uploadAsset(bytes, recordName: record.recordName, recordType: record.recordType ?? "",
                                                      fieldName: field, zoneID: record.zoneID)
            uploaded[checksum] = stored
            summary.assetsUploaded += 1
            summary.assetBytes += bytes.count
            return stored
        }
        for index in fields.entries.indices {
            let name = fields.entries[index].name
            switch fields.entries[index].field.value {
            case .asset(let asset):
                if let stored = try await upload(asset, field: name) { fields.entries[index].field.value = .asset(stored) }
            case .list(let items):
                var changed = items
                for (position, item) in items.enumerated() {
                    if case .asset(let asset) = item, let stored = try await upload(asset, field: name) { changed[position] = .asset(stored) }
                }
                fields.entries[index].field.value = .list(changed)
            default:
                break
            }
        }
        var result = record
        result.fields = fields
        return result
    }

    // MARK: Rejects

    private var firstRejectReason = ""

    private func reject(_ record: Record, code: String, reason: String) {
        summary.rejected += 1
        if firstRejectReason.isEmpty { firstRejectReason = "record \(record.recordName): \(code): \(reason)" }
        var out = JSONOutput(capacity: 512)
        out.append("{\"serverErrorCode\":")
        out.appendString(code)
        out.append(",\"reason\":")
        out.appendString(reason)
        out.append(",\"record\":")
        RecordJSON.encode(record, into: &out)
        out.append("}\n")
        rejectLines.append(contentsOf: out.bytes)
    }

    private func writeRejects() throws(CloudKitClientError) {
        guard let path = configuration.rejects else { return }
        do {
            let file = try OutputFile(path: path)
            try rejectLines.withUnsafeBytes { try file.write($0) }
            try file.commit()
        } catch {
            throw CloudKitClientError(.data, "\(path): \(error)")
        }
    }
}

/// Collects the records a pipeline writes.
private final class RecordCollector: RecordWriter {
    var records: [Record] = []
    func write(_ record: Record) throws { records.append(record) }
    func finish() throws {}
    var recordCount: Int { records.count }
    var bytesWritten: Int { 0 }
    var acceptsEncodedLines: Bool { false }
    func write(encodedLines bytes: UnsafeRawBufferPointer, records: Int) throws {}
}
#endif
