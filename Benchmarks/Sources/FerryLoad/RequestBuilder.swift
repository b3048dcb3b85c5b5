/// Builds the whole HTTP/1.1 requests of a run: CKWS JSON bodies for records/lookup,
/// records/query and records/modify (a `create` of one new record), behind the request line and
/// headers.
struct RequestBuilder: Sendable {
    let configuration: LoadConfiguration
    /// The record names lookups draw from.
    let names: [String]
    private let zoneID: String
    /// Each kind's request line and headers up to the Content-Length value.
    private let heads: [String]

    init(configuration: LoadConfiguration, names: [String]) {
        self.configuration = configuration
        self.names = names
        var zone = #"{"zoneName":"# + jsonString(configuration.zone)
        if let owner = configuration.owner { zone += #","ownerRecordName":"# + jsonString(owner) }
        zoneID = zone + "}"
        heads = RequestKind.allCases.map { kind in
            "POST \(configuration.path(kind)) HTTP/1.1\r\nHost: 127.0.0.1:\(configuration.port)\r\n"
                + "Content-Type: application/json\r\nAccept: application/json\r\nContent-Length: "
        }
    }

    /// A records/lookup of `configuration.lookupBatch` names drawn at random.
    func lookup(_ random: inout SplitMix64) -> [UInt8] {
        var body = #"{"records":["#
        for i in 0..<configuration.lookupBatch {
            if i > 0 { body += "," }
            body += #"{"recordName":"# + jsonString(names[Int(random.next() % UInt64(names.count))]) + "}"
        }
        body += #"],"zoneID":"# + zoneID + "}"
        return request(.lookup, body)
    }

    /// A records/query of `configuration.recordType`: the given filter, else the query field
    /// EQUALS a random 0...100; `resultsLimit` records at most.
    func query(_ random: inout SplitMix64) -> [UInt8] {
        let filter = configuration.queryFilter
            ?? #"[{"comparator":"EQUALS","fieldName":"# + jsonString(configuration.queryField)
                + #","fieldValue":{"value":\#(random.next() % 101),"type":"INT64"}}]"#
        let body = #"{"zoneID":"# + zoneID + #","resultsLimit":\#(configuration.queryLimit),"query":{"recordType":"#
            + jsonString(configuration.recordType) + #","filterBy":"# + filter + "}}"
        return request(.query, body)
    }

    /// A records/modify creating one record named `name` (so that every write can be found again).
    func create(_ name: String, client: Int, n: Int) -> [UInt8] {
        let body = #"{"operations":[{"operationType":"create","record":{"recordName":"# + jsonString(name)
            + #","recordType":"# + jsonString(configuration.createType)
            + #","fields":{"client":{"value":\#(client),"type":"INT64"},"n":{"value":\#(n),"type":"INT64"},"#
            + #""text":{"value":"written by ferry-load","type":"STRING"}}}}],"zoneID":"# + zoneID + "}"
        return request(.modify, body)
    }

    private func request(_ kind: RequestKind, _ body: String) -> [UInt8] {
        var request: [UInt8] = []
        request.reserveCapacity(heads[kind.rawValue].utf8.count + body.utf8.count + 8)
        request += heads[kind.rawValue].utf8
        request += String(body.utf8.count).utf8
        request += "\r\n\r\n".utf8
        request += body.utf8
        return request
    }
}

/// `text` as a JSON string literal, quotes included.
func jsonString(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where scalar.value < 0x20:
            let hex = String(scalar.value, radix: 16)
            out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}

/// A small seeded generator (SplitMix64): each client has its own, so runs are repeatable.
struct SplitMix64: Sendable {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
