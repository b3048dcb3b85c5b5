import FerryCloudKit
import FerryPredicate
import FerryRecords
import FerryStore
import FerryTestSupport
import Testing

/// A store of chat messages in a temporary folder and a service over it; requests sent with
/// ``call(_:_:body:method:)`` straight to ``CloudKitService/answer(_:)`` (no HTTP).
struct ServiceFixture {
    static let container = "iCloud.com.example.chat"
    let path: String
    let service: CloudKitService

    /// Messages m01…m30 in the custom zone `Chats` of the private database and n01…n05 in its
    /// default zone (``ChatStoreFixture``).
    static func makeStore() throws -> String { try ChatStoreFixture.makeStore(messages: 30, inDefaultZone: 5) }

    static func message(_ i: Int, zone: String?, prefix: String = "m") -> String { ChatStoreFixture.message(i, zone: zone, prefix: prefix) }

    init(readOnly: Bool = false, schema: String? = nil) throws {
        path = try Self.makeStore()
        let parsed = try schema.map { try CloudKitSchema(parsing: $0) }
        service = try CloudKitService(storePath: path, configuration: .init(containerIdentifier: Self.container, isReadOnly: readOnly, schema: parsed))
    }

    init(path: String, readOnly: Bool = false) throws {
        self.path = path
        service = try CloudKitService(storePath: path, configuration: .init(containerIdentifier: Self.container, isReadOnly: readOnly))
    }

    /// Sends `body` to `operation` of `database`; the status and the parsed answer.
    func call(_ operation: String, _ database: String = "private", body: String = "", method: String = "POST") throws -> (status: Int, json: JSONValue) {
        let response = service.answer(CloudKitRequest(method: method, path: "/database/1/\(Self.container)/development/\(database)/\(operation)",
                                                      body: Array(body.utf8)))
        return (response.status, try JSONValue(parsing: String(decoding: response.body, as: UTF8.self)))
    }

    /// The record names of an answer's `records`.
    static func names(_ json: JSONValue) -> [String] {
        (json["records"]?.arrayValue ?? []).compactMap { $0["recordName"]?.stringValue }
    }
}

/// Expects a request-level CKWS error: the status, the code, a uuid and a reason.
func expectError(_ answer: (status: Int, json: JSONValue), _ status: Int, _ code: String, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(answer.status == status, sourceLocation: sourceLocation)
    #expect(answer.json["serverErrorCode"]?.stringValue == code, "\(answer.json)", sourceLocation: sourceLocation)
    #expect(answer.json["uuid"]?.stringValue?.count == 36, sourceLocation: sourceLocation)
    #expect((answer.json["reason"]?.stringValue ?? "").isEmpty == false, sourceLocation: sourceLocation)
}
