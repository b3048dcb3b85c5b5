import FerryRecords
import FerryStore

extension CloudKitService {
    /// The path prefix of upload URLs: `{baseURL}/upload/{token}`.
    public static let uploadPathPrefix = "/upload/"
    /// The path prefix of download URLs: `{baseURL}/assets/{receipt}/${f}`.
    public static let downloadPathPrefix = "/assets/"

    /// Whether `text` is an upload token this service makes: 32 lower-case hex digits.
    static func isToken(_ text: Substring) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    static func makeToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef")
        return String((0..<32).map { _ in digits[Int.random(in: 0..<16, using: &generator)] })
    }

    /// The base URL without a trailing slash.
    var base: String {
        var text = configuration.baseURL
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }

    // MARK: assets/upload

    /// `{tokens: [{recordType, fieldName, recordName?}], zoneID?}` → `{tokens: [{recordName, fieldName, url}]}`.
    func uploadTokens(_ json: JSONObject) throws -> CloudKitResponse {
        guard !configuration.isReadOnly else { throw CloudKitError(.accessDenied, "the store is served read-only: writes are refused") }
        guard let items = try WireJSON.array(json, "tokens", in: "") else { throw CloudKitError.badRequest("expected a tokens array, found none") }
        guard items.count <= CloudKitModifyRequest.maximumOperations else {
            throw CloudKitError.badRequest("expected at most \(CloudKitModifyRequest.maximumOperations) tokens, found \(items.count)")
        }
        var out = JSONOutput(capacity: 1024)
        out.append("{\"tokens\":[")
        for (index, item) in items.enumerated() {
            guard case .object(let entry) = item, let field = try WireJSON.string(entry, "fieldName", in: "tokens[].") else {
                throw CloudKitError.badRequest("expected tokens[\(index)] to be {recordType, fieldName, recordName?}, found \(WireJSON.kind(item))")
            }
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append("{")
            if let name = try WireJSON.string(entry, "recordName", in: "tokens[].") {
                out.append("\"recordName\":")
                out.appendString(name)
                out.append(",")
            }
            out.append("\"fieldName\":")
            out.appendString(field)
            out.append(",\"url\":")
            out.appendString(base + Self.uploadPathPrefix + Self.makeToken())
            out.append("}")
        }
        out.append("]}")
        return Self.ok(out)
    }

    /// A POST of bytes to an upload URL → `{singleFile: {fileChecksum, receipt, size}}`.
    func upload(token: Substring, request: CloudKitRequest) throws -> CloudKitResponse {
        guard request.method.uppercased() == "POST" else { throw CloudKitError.badRequest("expected POST to an upload URL, found \(request.method)") }
        guard Self.isToken(token) else { throw CloudKitError(.notFound, "no such upload URL: \(JSONOutputLiteral(request.path))") }
        let asset = try connections.write { store in try store.storeAsset(request.body, receipt: String(token)) }
        var out = JSONOutput(capacity: 256)
        out.append("{\"singleFile\":{\"fileChecksum\":")
        out.appendString(asset.fileChecksum)
        out.append(",\"receipt\":")
        out.appendString(asset.receipt)
        out.append(",\"size\":")
        out.appendInteger(asset.size)
        out.append("}}")
        return Self.ok(out)
    }

    /// A GET of a download URL → the bytes.
    func download(_ rest: Substring, request: CloudKitRequest) throws -> CloudKitResponse {
        guard request.method.uppercased() == "GET" else { throw CloudKitError.badRequest("expected GET for a download URL, found \(request.method)") }
        let receipt = rest.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard Self.isToken(receipt), let bytes = try connections.read({ store in try store.assetBytes(receipt: String(receipt)) }) else {
            throw CloudKitError(.notFound, "no such asset: \(JSONOutputLiteral(request.path))")
        }
        return CloudKitResponse(status: 200, headers: [(name: "Content-Type", value: "application/octet-stream")], body: bytes)
    }

    /// The asset fields of a record to save with receipts made into the store's assets: each
    /// receipt looked up (unknown → BAD_REQUEST), the value given its checksum, size and download
    /// URL; returns the receipts to attach.
    func resolvingAssets(of record: inout Record, store: RecordStore) throws -> [String] {
        guard var fields = record.fields else { return [] }
        var receipts: [String] = []
        func resolve(_ value: FieldValue) throws -> FieldValue {
            switch value {
            case .asset(var asset):
                guard let receipt = asset.receipt else { return value }
                guard let stored = try store.asset(receipt: receipt) else {
                    throw CloudKitError.badRequest("unknown asset receipt \(JSONOutputLiteral(receipt)): upload the bytes first (assets/upload)")
                }
                receipts.append(receipt)
                asset.receipt = nil
                asset.fileChecksum = stored.fileChecksum
                asset.size = stored.size
                asset.downloadURL = base + Self.downloadPathPrefix + receipt + "/${f}"
                return .asset(asset)
            case .list(let items): return .list(try items.map(resolve))
            default: return value
            }
        }
        for index in fields.entries.indices {
            fields.entries[index].field.value = try resolve(fields.entries[index].field.value)
        }
        record.fields = fields
        return receipts
    }
}
