import FerryRecords

/// The requests of CKWS's endpoints, read from and written to their JSON bodies: the service
/// reads them, a client writes them. Answers are read with the record model's readers
/// (``RecordJSON/decodeDocument(_:configuration:)`` gives ``RecordsResponse`` and
/// ``ZonesResponse``) and written by ``CloudKitAnswer``.
///
/// Each `init(json:)` throws ``CloudKitError`` (BAD_REQUEST) saying which member was expected
/// and what was found; `json` is the body to send.
public enum CloudKitRequests {}

/// A `query` object: a record type, filters and sort keys.
public struct CloudKitQuery: Sendable, Equatable {
    /// A `sortBy` entry.
    public struct Sort: Sendable, Equatable {
        /// The field (or, when `isSystemField`, the system field) to sort by.
        public var fieldName: String
        public var isSystemField: Bool
        public var ascending: Bool
        public init(fieldName: String, isSystemField: Bool = false, ascending: Bool = true) {
            self.fieldName = fieldName
            self.isSystemField = isSystemField
            self.ascending = ascending
        }
    }

    public var recordType: String
    /// The `filterBy` array as sent (``FerryPredicate/RecordPredicate/init(cloudKitFilterBy:numbersAsStrings:)`` reads it).
    public var filterBy: JSONValue?
    public var sortBy: [Sort]

    public init(recordType: String, filterBy: JSONValue? = nil, sortBy: [Sort] = []) {
        self.recordType = recordType
        self.filterBy = filterBy
        self.sortBy = sortBy
    }

    init(json: JSONObject) throws(CloudKitError) {
        guard let type = try WireJSON.string(json, "recordType", in: "query."), !type.isEmpty else {
            throw .badRequest("expected query.recordType to be a non-empty string, found \(WireJSON.kind(json["recordType"]))")
        }
        recordType = type
        filterBy = json["filterBy"].flatMap { $0 == .null ? nil : $0 }
        sortBy = []
        for item in try WireJSON.array(json, "sortBy", in: "query.") ?? [] {
            guard case .object(let sort) = item else { throw .badRequest("expected query.sortBy to hold objects, found \(WireJSON.kind(item))") }
            let ascending = try WireJSON.bool(sort, "ascending", in: "query.sortBy[].") ?? true
            if let name = try WireJSON.string(sort, "systemFieldName", in: "query.sortBy[].") {
                sortBy.append(Sort(fieldName: name, isSystemField: true, ascending: ascending))
            } else if let name = try WireJSON.string(sort, "fieldName", in: "query.sortBy[]."), !name.isEmpty {
                sortBy.append(Sort(fieldName: name, ascending: ascending))
            } else {
                throw .badRequest("expected query.sortBy[].fieldName or systemFieldName, found neither")
            }
        }
    }

    var json: JSONValue {
        var object: JSONObject = ["recordType": .string(recordType)]
        if let filterBy { object["filterBy"] = filterBy }
        if !sortBy.isEmpty {
            object["sortBy"] = .array(sortBy.map { sort in
                .object([(sort.isSystemField ? "systemFieldName" : "fieldName"): .string(sort.fieldName), "ascending": .bool(sort.ascending)])
            })
        }
        return .object(object)
    }
}

/// `records/query`.
public struct CloudKitQueryRequest: Sendable, Equatable {
    public var zoneID: ZoneID?
    public var resultsLimit: Int?
    public var query: CloudKitQuery
    public var continuationMarker: String?
    public var desiredKeys: [String]?
    public var zoneWide: Bool
    public var numbersAsStrings: Bool

    public init(query: CloudKitQuery, zoneID: ZoneID? = nil, resultsLimit: Int? = nil, continuationMarker: String? = nil,
                desiredKeys: [String]? = nil, zoneWide: Bool = false, numbersAsStrings: Bool = false) {
        self.query = query
        self.zoneID = zoneID
        self.resultsLimit = resultsLimit
        self.continuationMarker = continuationMarker
        self.desiredKeys = desiredKeys
        self.zoneWide = zoneWide
        self.numbersAsStrings = numbersAsStrings
    }

    public init(json: JSONObject) throws(CloudKitError) {
        guard let query = try WireJSON.object(json, "query", in: "") else { throw .badRequest("expected a query object, found none") }
        self.query = try CloudKitQuery(json: query)
        zoneID = try WireJSON.object(json, "zoneID", in: "").map { (zone) throws(CloudKitError) in try WireJSON.zoneID(zone, in: "zoneID.") }
        resultsLimit = try WireJSON.integer(json, "resultsLimit", in: "")
        continuationMarker = try WireJSON.string(json, "continuationMarker", in: "")
        desiredKeys = try WireJSON.strings(json, "desiredKeys", in: "")
        zoneWide = try WireJSON.bool(json, "zoneWide", in: "") ?? false
        numbersAsStrings = try WireJSON.bool(json, "numbersAsStrings", in: "") ?? false
    }

    public var json: JSONValue {
        var object: JSONObject = [:]
        if let zoneID { object["zoneID"] = WireJSON.value(of: zoneID) }
        if let resultsLimit { object["resultsLimit"] = .number(JSONNumber(Int64(resultsLimit))) }
        object["query"] = query.json
        if let continuationMarker { object["continuationMarker"] = .string(continuationMarker) }
        if let desiredKeys { object["desiredKeys"] = .array(desiredKeys.map(JSONValue.string)) }
        if zoneWide { object["zoneWide"] = .bool(true) }
        if numbersAsStrings { object["numbersAsStrings"] = .bool(true) }
        return .object(object)
    }
}

/// `records/lookup`.
public struct CloudKitLookupRequest: Sendable, Equatable {
    public var recordNames: [String]
    public var zoneID: ZoneID?
    public var desiredKeys: [String]?
    public var numbersAsStrings: Bool

    public init(recordNames: [String], zoneID: ZoneID? = nil, desiredKeys: [String]? = nil, numbersAsStrings: Bool = false) {
        self.recordNames = recordNames
        self.zoneID = zoneID
        self.desiredKeys = desiredKeys
        self.numbersAsStrings = numbersAsStrings
    }

    public init(json: JSONObject) throws(CloudKitError) {
        guard let records = try WireJSON.array(json, "records", in: "") else { throw .badRequest("expected a records array, found none") }
        recordNames = []
        for item in records {
            guard case .object(let entry) = item, let name = try WireJSON.string(entry, "recordName", in: "records[].") else {
                throw .badRequest("expected records[] to hold {recordName} objects, found \(WireJSON.kind(item))")
            }
            recordNames.append(name)
        }
        zoneID = try WireJSON.object(json, "zoneID", in: "").map { (zone) throws(CloudKitError) in try WireJSON.zoneID(zone, in: "zoneID.") }
        desiredKeys = try WireJSON.strings(json, "desiredKeys", in: "")
        numbersAsStrings = try WireJSON.bool(json, "numbersAsStrings", in: "") ?? false
    }

    public var json: JSONValue {
        var object: JSONObject = ["records": .array(recordNames.map { .object(["recordName": .string($0)]) })]
        if let zoneID { object["zoneID"] = WireJSON.value(of: zoneID) }
        if let desiredKeys { object["desiredKeys"] = .array(desiredKeys.map(JSONValue.string)) }
        if numbersAsStrings { object["numbersAsStrings"] = .bool(true) }
        return .object(object)
    }
}

/// `records/modify`.
public struct CloudKitModifyRequest: Sendable, Equatable {
    /// An `operationType`.
    public enum OperationType: String, Sendable, CaseIterable {
        case create, update, forceUpdate, replace, forceReplace, delete, forceDelete
    }

    /// One operation.
    public struct Operation: Sendable, Equatable {
        public var operationType: OperationType
        public var record: Record
        public var desiredKeys: [String]?
        public init(_ operationType: OperationType, record: Record, desiredKeys: [String]? = nil) {
            self.operationType = operationType
            self.record = record
            self.desiredKeys = desiredKeys
        }
    }

    public var operations: [Operation]
    public var zoneID: ZoneID?
    /// `atomic` as sent (`nil`: the default, true).
    public var atomic: Bool?
    public var desiredKeys: [String]?
    public var numbersAsStrings: Bool

    public init(operations: [Operation], zoneID: ZoneID? = nil, atomic: Bool? = nil, desiredKeys: [String]? = nil, numbersAsStrings: Bool = false) {
        self.operations = operations
        self.zoneID = zoneID
        self.atomic = atomic
        self.desiredKeys = desiredKeys
        self.numbersAsStrings = numbersAsStrings
    }

    /// The most operations in one request.
    public static let maximumOperations = 200

    public init(json: JSONObject) throws(CloudKitError) {
        guard let items = try WireJSON.array(json, "operations", in: "") else { throw .badRequest("expected an operations array, found none") }
        guard items.count <= Self.maximumOperations else {
            throw .badRequest("expected at most \(Self.maximumOperations) operations in a request, found \(items.count)")
        }
        numbersAsStrings = try WireJSON.bool(json, "numbersAsStrings", in: "") ?? false
        operations = []
        for (index, item) in items.enumerated() {
            let place = "operations[\(index)]."
            guard case .object(let entry) = item else { throw .badRequest("expected operations[\(index)] to be an object, found \(WireJSON.kind(item))") }
            guard let typeName = try WireJSON.string(entry, "operationType", in: place) else {
                throw .badRequest("expected \(place)operationType, found none")
            }
            guard let type = OperationType(rawValue: typeName) else {
                throw .badRequest("expected \(place)operationType to be one of \(OperationType.allCases.map(\.rawValue).joined(separator: ", ")), found \(JSONOutputLiteral(typeName))")
            }
            guard var record = try WireJSON.object(entry, "record", in: place) else { throw .badRequest("expected \(place)record, found none") }
            if record["recordName"] == nil || record["recordName"] == .null {
                guard type == .create else { throw .badRequest("expected \(place)record.recordName, found none") }
                record["recordName"] = .string(CloudKitError.makeUUID())
            }
            operations.append(Operation(type, record: try WireJSON.record(record, numbersAsStrings: numbersAsStrings, in: place),
                                        desiredKeys: try WireJSON.strings(entry, "desiredKeys", in: place)))
        }
        zoneID = try WireJSON.object(json, "zoneID", in: "").map { (zone) throws(CloudKitError) in try WireJSON.zoneID(zone, in: "zoneID.") }
        atomic = try WireJSON.bool(json, "atomic", in: "")
        desiredKeys = try WireJSON.strings(json, "desiredKeys", in: "")
    }

    public var json: JSONValue {
        var object: JSONObject = [:]
        object["operations"] = .array(operations.map { operation in
            var entry: JSONObject = ["operationType": .string(operation.operationType.rawValue)]
            entry["record"] = (try? JSONValue(parsing: RecordJSON.encodedString(operation.record))) ?? .null
            if let keys = operation.desiredKeys { entry["desiredKeys"] = .array(keys.map(JSONValue.string)) }
            return .object(entry)
        })
        if let zoneID { object["zoneID"] = WireJSON.value(of: zoneID) }
        if let atomic { object["atomic"] = .bool(atomic) }
        if let desiredKeys { object["desiredKeys"] = .array(desiredKeys.map(JSONValue.string)) }
        if numbersAsStrings { object["numbersAsStrings"] = .bool(true) }
        return .object(object)
    }
}

/// `records/changes`: a zone's record changes after a token.
public struct CloudKitRecordChangesRequest: Sendable, Equatable {
    public var zoneID: ZoneID
    public var syncToken: String?
    public var resultsLimit: Int?
    public var desiredKeys: [String]?
    public var desiredRecordTypes: [String]?

    public init(zoneID: ZoneID, syncToken: String? = nil, resultsLimit: Int? = nil, desiredKeys: [String]? = nil, desiredRecordTypes: [String]? = nil) {
        self.zoneID = zoneID
        self.syncToken = syncToken
        self.resultsLimit = resultsLimit
        self.desiredKeys = desiredKeys
        self.desiredRecordTypes = desiredRecordTypes
    }

    public init(json: JSONObject, place: String = "") throws(CloudKitError) {
        guard let zone = try WireJSON.object(json, "zoneID", in: place) else { throw .badRequest("expected \(place)zoneID, found none") }
        zoneID = try WireJSON.zoneID(zone, in: place + "zoneID.")
        syncToken = try WireJSON.string(json, "syncToken", in: place)
        resultsLimit = try WireJSON.integer(json, "resultsLimit", in: place)
        desiredKeys = try WireJSON.strings(json, "desiredKeys", in: place)
        desiredRecordTypes = try WireJSON.strings(json, "desiredRecordTypes", in: place)
    }

    public var json: JSONValue {
        var object: JSONObject = ["zoneID": WireJSON.value(of: zoneID)]
        if let syncToken { object["syncToken"] = .string(syncToken) }
        if let resultsLimit { object["resultsLimit"] = .number(JSONNumber(Int64(resultsLimit))) }
        if let desiredKeys { object["desiredKeys"] = .array(desiredKeys.map(JSONValue.string)) }
        if let desiredRecordTypes { object["desiredRecordTypes"] = .array(desiredRecordTypes.map(JSONValue.string)) }
        return .object(object)
    }
}

/// `changes/zone`: several zones' record changes.
public struct CloudKitZoneChangesRequest: Sendable, Equatable {
    public var zones: [CloudKitRecordChangesRequest]

    public init(zones: [CloudKitRecordChangesRequest]) { self.zones = zones }

    public init(json: JSONObject) throws(CloudKitError) {
        guard let items = try WireJSON.array(json, "zones", in: "") else { throw .badRequest("expected a zones array, found none") }
        zones = []
        for (index, item) in items.enumerated() {
            guard case .object(let entry) = item else { throw .badRequest("expected zones[\(index)] to be an object, found \(WireJSON.kind(item))") }
            zones.append(try CloudKitRecordChangesRequest(json: entry, place: "zones[\(index)]."))
        }
    }

    public var json: JSONValue { .object(["zones": .array(zones.map(\.json))]) }
}

/// `changes/database` (`syncToken`) and the legacy `zones/changes` (`metaSyncToken`).
public struct CloudKitDatabaseChangesRequest: Sendable, Equatable {
    public var syncToken: String?
    public var resultsLimit: Int?
    /// Whether the token is sent as `metaSyncToken` (`zones/changes`).
    public var isLegacy: Bool

    public init(syncToken: String? = nil, resultsLimit: Int? = nil, isLegacy: Bool = false) {
        self.syncToken = syncToken
        self.resultsLimit = resultsLimit
        self.isLegacy = isLegacy
    }

    public init(json: JSONObject, isLegacy: Bool) throws(CloudKitError) {
        self.isLegacy = isLegacy
        syncToken = try WireJSON.string(json, isLegacy ? "metaSyncToken" : "syncToken", in: "")
        resultsLimit = try WireJSON.integer(json, "resultsLimit", in: "")
    }

    public var json: JSONValue {
        var object: JSONObject = [:]
        if let syncToken { object[isLegacy ? "metaSyncToken" : "syncToken"] = .string(syncToken) }
        if let resultsLimit { object["resultsLimit"] = .number(JSONNumber(Int64(resultsLimit))) }
        return .object(object)
    }
}

/// `zones/lookup`.
public struct CloudKitZonesLookupRequest: Sendable, Equatable {
    public var zones: [ZoneID]

    public init(zones: [ZoneID]) { self.zones = zones }

    public init(json: JSONObject) throws(CloudKitError) {
        guard let items = try WireJSON.array(json, "zones", in: "") else { throw .badRequest("expected a zones array, found none") }
        zones = []
        for (index, item) in items.enumerated() {
            guard case .object(var entry) = item else { throw .badRequest("expected zones[\(index)] to be an object, found \(WireJSON.kind(item))") }
            if case .object(let inner)? = entry["zoneID"] { entry = inner }
            zones.append(try WireJSON.zoneID(entry, in: "zones[\(index)]."))
        }
    }

    public var json: JSONValue { .object(["zones": .array(zones.map(WireJSON.value(of:)))]) }
}

/// `zones/modify`.
public struct CloudKitZonesModifyRequest: Sendable, Equatable {
    public enum OperationType: String, Sendable, CaseIterable {
        case create, delete
    }

    public struct Operation: Sendable, Equatable {
        public var operationType: OperationType
        public var zoneID: ZoneID
        public init(_ operationType: OperationType, zoneID: ZoneID) {
            self.operationType = operationType
            self.zoneID = zoneID
        }
    }

    public var operations: [Operation]

    public init(operations: [Operation]) { self.operations = operations }

    public init(json: JSONObject) throws(CloudKitError) {
        guard let items = try WireJSON.array(json, "operations", in: "") else { throw .badRequest("expected an operations array, found none") }
        guard items.count <= CloudKitModifyRequest.maximumOperations else {
            throw .badRequest("expected at most \(CloudKitModifyRequest.maximumOperations) operations in a request, found \(items.count)")
        }
        operations = []
        for (index, item) in items.enumerated() {
            let place = "operations[\(index)]."
            guard case .object(let entry) = item else { throw .badRequest("expected operations[\(index)] to be an object, found \(WireJSON.kind(item))") }
            let typeName = try WireJSON.string(entry, "operationType", in: place) ?? ""
            guard let type = OperationType(rawValue: typeName) else {
                throw .badRequest("expected \(place)operationType to be create or delete, found \(JSONOutputLiteral(typeName))")
            }
            guard let zone = try WireJSON.object(entry, "zone", in: place) else { throw .badRequest("expected \(place)zone, found none") }
            guard let zoneID = try WireJSON.object(zone, "zoneID", in: place + "zone.") else {
                throw .badRequest("expected \(place)zone.zoneID, found none")
            }
            operations.append(Operation(type, zoneID: try WireJSON.zoneID(zoneID, in: place + "zone.zoneID.")))
        }
    }

    public var json: JSONValue {
        .object(["operations": .array(operations.map {
            .object(["operationType": .string($0.operationType.rawValue), "zone": .object(["zoneID": WireJSON.value(of: $0.zoneID)])])
        })])
    }
}
