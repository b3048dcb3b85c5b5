import FerryChangeLog
import FerryIO
import FerryPredicate
import FerryRecords
import FerryStore

extension CloudKitService {
    // MARK: records/query

    /// The store's sort key of a CKWS `sortBy` entry.
    static func sortKey(_ sort: CloudKitQuery.Sort) throws(CloudKitError) -> StoreSortKey {
        guard sort.isSystemField else { return StoreSortKey(key: sort.fieldName, ascending: sort.ascending) }
        let key: String
        switch sort.fieldName {
        case "recordName": key = "recordName"
        case "createdTimestamp": key = "creationDate"
        case "modifiedTimestamp": key = "modificationDate"
        default:
            throw .badRequest("expected a sortable systemFieldName (recordName, createdTimestamp, modifiedTimestamp), found \(JSONOutputLiteral(sort.fieldName))")
        }
        return StoreSortKey(key: key, ascending: sort.ascending)
    }

    /// The store query a CKWS query is: the predicate its `filterBy` means, checked against
    /// CloudKit's query rules (and the schema's indexes, given one).
    func storeQuery(_ request: CloudKitQueryRequest, database: CloudKitDatabase) throws -> StoreQuery {
        let limit = try Self.resultsLimit(request.resultsLimit)
        let filters = try request.query.filterBy.map { (filters) throws(PredicateError) in
            try RecordPredicate.cloudKitFilters(filters, numbersAsStrings: request.numbersAsStrings)
        } ?? []
        let predicate: RecordPredicate? = filters.isEmpty ? nil : filters.count == 1 ? filters[0] : .and(filters)
        var sortKeys: [StoreSortKey] = []
        for sort in request.query.sortBy { sortKeys.append(try Self.sortKey(sort)) }
        let fieldSorts = request.query.sortBy.filter { !$0.isSystemField }.map(\.fieldName)
        // NOT_LIST_CONTAINS_ALL is NOT over an AND, which CloudKit's predicate rules refuse but its
        // filter takes: its leaves are checked instead.
        let checked = filters.map { filter -> RecordPredicate in
            if case .not(.and(let leaves, _), _) = filter { return .and(leaves) }
            return filter
        }
        let validation = (checked.isEmpty ? RecordPredicate.constant(true) : .and(checked)).validateForCloudKit(
            recordType: request.query.recordType, schema: configuration.schema, sortKeys: fieldSorts)
        if let reason = validation.reasons.first {
            throw CloudKitError.badRequest("the query cannot be run: \(reason.message)")
        }
        return StoreQuery(recordTypes: [request.query.recordType],
                          zoneNames: request.zoneWide ? [] : [request.zoneID?.zoneName ?? ZoneID.defaultZoneName],
                          database: database.rawValue, predicate: predicate, sortKeys: sortKeys, desiredKeys: request.desiredKeys,
                          limit: limit, cursor: request.continuationMarker)
    }

    func query(_ request: CloudKitQueryRequest, database: CloudKitDatabase) throws -> CloudKitResponse {
        let query = try storeQuery(request, database: database)
        let page = try connections.read { store in try store.query(query) }
        var out = JSONOutput(capacity: 4096)
        out.append("{\"records\":[")
        for (index, json) in page.recordsJSON.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            Self.appendRecord(json, numbersAsStrings: request.numbersAsStrings, into: &out)
        }
        out.append("]")
        if let marker = page.continuationMarker {
            out.append(",\"continuationMarker\":")
            out.appendString(marker)
        }
        out.append("}")
        return Self.ok(out)
    }

    // MARK: records/lookup

    func lookup(_ request: CloudKitLookupRequest, database: CloudKitDatabase) throws -> CloudKitResponse {
        guard request.recordNames.count <= Self.maximumResultsLimit else {
            throw CloudKitError.badRequest("expected at most \(Self.maximumResultsLimit) records to look up, found \(request.recordNames.count)")
        }
        var out = JSONOutput(capacity: 4096)
        out.append("{\"records\":[")
        try connections.read { store in
            let zones = try liveZones(store, database: database)
            guard let zone = zone(named: request.zoneID, in: zones) else {
                for (index, name) in request.recordNames.enumerated() {
                    if index > 0 { out.append(UInt8(ascii: ",")) }
                    CloudKitError(.zoneNotFound, "Zone \(JSONOutputLiteral(request.zoneID?.zoneName ?? "")) does not exist")
                        .appendRecordError(recordName: name, into: &out)
                }
                return
            }
            let found = try store.fetch(names: request.recordNames, zone: zone.zoneID.zoneName, database: database.rawValue,
                                        desiredKeys: request.desiredKeys)
            let missing = Set(found.missing)
            var next = 0
            for (index, name) in request.recordNames.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                if missing.contains(name) || next >= found.recordsJSON.count {
                    CloudKitError(.notFound, "Record not found").appendRecordError(recordName: name, into: &out)
                } else {
                    Self.appendRecord(found.recordsJSON[next], numbersAsStrings: request.numbersAsStrings, into: &out)
                    next += 1
                }
            }
        }
        out.append("]}")
        return Self.ok(out)
    }

    // MARK: records/modify

    /// What one operation of a modify came to.
    enum ModifyOutcome {
        case saved(Record, desiredKeys: [String]?)
        case deleted(String)
        case failed(String, CloudKitError)
    }

    func modify(_ request: CloudKitModifyRequest, database: CloudKitDatabase) throws -> CloudKitResponse {
        let outcomes = try connections.write { store in try applyModify(request, database: database, store: store) }
        var out = JSONOutput(capacity: 4096)
        out.append("{\"records\":[")
        for (index, outcome) in outcomes.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            switch outcome {
            case .saved(var record, let keys):
                if let keys, var fields = record.fields {
                    let wanted = Set(keys)
                    fields.entries.removeAll { !wanted.contains($0.name) }
                    record.fields = fields
                }
                var json = JSONOutput(capacity: 1024)
                RecordJSON.encode(record, into: &json)
                Self.appendRecord(json.array, numbersAsStrings: request.numbersAsStrings, into: &out)
            case .deleted(let name):
                out.append("{\"recordName\":")
                out.appendString(name)
                out.append(",\"deleted\":true}")
            case .failed(let name, let error):
                error.appendRecordError(recordName: name, into: &out)
            }
        }
        out.append("]}")
        return Self.ok(out)
    }

    /// Checks each operation against the store as the operations before it left it, then applies
    /// the ones that succeeded in one transaction (none when an atomic batch has a failure).
    private func applyModify(_ request: CloudKitModifyRequest, database: CloudKitDatabase, store: RecordStore) throws -> [ModifyOutcome] {
        let zones = try liveZones(store, database: database)
        var overlay: [String: Record?] = [:]
        var outcomes: [ModifyOutcome] = []
        var events: [ChangeEvent] = []
        var touchesDefaultZone = false
        var attaching: [String] = []
        let now = Syscall.nowMilliseconds()
        for operation in request.operations {
            let given = operation.record
            let name = given.recordName
            let keys = operation.desiredKeys ?? request.desiredKeys
            guard let zone = zone(named: given.zoneID ?? request.zoneID, in: zones) else {
                outcomes.append(.failed(name, CloudKitError(.zoneNotFound, "Zone \(JSONOutputLiteral((given.zoneID ?? request.zoneID)?.zoneName ?? "")) does not exist")))
                continue
            }
            if zone.zoneID.isDefaultZone { touchesDefaultZone = true }
            let key = zone.zoneID.zoneName + "\u{0}" + name
            let current: Record?
            if let known = overlay[key] {
                current = known
            } else {
                let found = try store.fetch(names: [name], zone: zone.zoneID.zoneName, database: database.rawValue)
                current = try found.recordsJSON.first.map { json in try json.withUnsafeBytes { try RecordJSON.decodeRecord($0) } }
            }
            var zoneID = zone.zoneID
            if zoneID.zoneType == nil { zoneID.zoneType = zoneID.isDefaultZone ? "DEFAULT_ZONE" : "REGULAR_CUSTOM_ZONE" }
            let type = operation.operationType
            // The preconditions, as CloudKit checks them.
            if type == .create, current != nil {
                outcomes.append(.failed(name, CloudKitError(.exists, "record to insert already exists")))
                continue
            }
            if [.update, .forceUpdate, .replace, .delete, .forceDelete].contains(type), current == nil {
                outcomes.append(.failed(name, CloudKitError(.notFound, "Record not found")))
                continue
            }
            if [.update, .replace, .delete].contains(type), let current, given.recordChangeTag != current.recordChangeTag {
                outcomes.append(.failed(name, CloudKitError(.conflict, given.recordChangeTag == nil
                    ? "a recordChangeTag is required to \(type.rawValue) a record (use force\(type.rawValue.prefix(1).uppercased() + type.rawValue.dropFirst()) to skip the check)"
                    : "record to \(type.rawValue) has been modified: its recordChangeTag is \(current.recordChangeTag ?? "none"), not \(given.recordChangeTag!)")))
                continue
            }
            if type == .delete || type == .forceDelete {
                events.append(.recordDeleted(RecordID(recordName: name, zoneID: zone.zoneID), recordType: current?.recordType))
                overlay[key] = .some(nil)
                outcomes.append(.deleted(name))
                continue
            }
            var record: Record
            switch type {
            case .update, .forceUpdate:
                record = current!
                var fields = record.fields ?? RecordFields()
                for entry in given.fields ?? RecordFields() {
                    if let index = fields.entries.firstIndex(where: { $0.name == entry.name }) {
                        fields.entries[index] = entry
                    } else {
                        fields.entries.append(entry)
                    }
                }
                record.fields = fields
                if let parent = given.parent { record.parent = parent }
                if let share = given.share { record.share = share }
                if let recordType = given.recordType { record.recordType = recordType }
            default:
                record = given
                record.created = current?.created
                if record.recordType == nil { record.recordType = current?.recordType }
                record.unknownKeys = JSONObject()
            }
            guard let recordType = record.recordType, !recordType.isEmpty else {
                outcomes.append(.failed(name, .badRequest("expected a recordType for the record to \(type.rawValue), found none")))
                continue
            }
            _ = recordType
            let receipts: [String]
            do {
                receipts = try resolvingAssets(of: &record, store: store)
            } catch let error as CloudKitError {
                outcomes.append(.failed(name, error))
                continue
            }
            attaching += receipts
            let stamp = RecordStamp(timestamp: max(now, (current?.modified?.timestamp ?? 0) + 1), userRecordName: configuration.userRecordName)
            record.zoneID = zoneID
            record.recordChangeTag = Self.makeChangeTag()
            record.created = record.created ?? stamp
            record.modified = stamp
            record.pluginFields = record.pluginFields ?? .object(JSONObject())
            record.deleted = false
            events.append(.recordSaved(record))
            overlay[key] = .some(record)
            outcomes.append(.saved(record, desiredKeys: keys))
        }
        let failed = outcomes.contains { if case .failed = $0 { true } else { false } }
        if failed && (request.atomic ?? true) && !touchesDefaultZone {
            // An atomic batch in custom zones: nothing applied, every other operation ATOMIC_ERROR.
            return outcomes.map { outcome in
                switch outcome {
                case .failed: return outcome
                case .saved(let record, _): return .failed(record.recordName, Self.atomicError)
                case .deleted(let name): return .failed(name, Self.atomicError)
                }
            }
        }
        if !events.isEmpty { try store.apply(events, database: database.rawValue) }
        try store.attachAssets(receipts: attaching)
        return outcomes
    }

    static let atomicError = CloudKitError(.atomicError, "Atomic failure: another operation of the batch failed, so none was applied")

    /// A new change tag: 8 base-36 digits, at random (CloudKit's tags look so: `j7if0cac`).
    static func makeChangeTag() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdefghijklmnopqrstuvwxyz")
        return String((0..<8).map { _ in digits[Int.random(in: 0..<36, using: &generator)] })
    }
}
