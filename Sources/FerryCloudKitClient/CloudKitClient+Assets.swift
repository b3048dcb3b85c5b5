#if CloudKit
import FerryCloudKit
import FerryInternals
import FerryRecords
import NIOHTTP1

/// Asset bytes: uploaded before the records that name them (`assets/upload`, then a POST of the
/// bytes, answered with the receipt a `records/modify` attaches), downloaded from a record's
/// `downloadURL`. Upload and download URLs are signed by CloudKit itself, so they carry no
/// credentials of the client.
extension CloudKitClient {
    /// Uploads `bytes` for field `fieldName` of a record: the asset value, with its receipt, that
    /// a `records/modify` of the record then saves.
    public func uploadAsset(_ bytes: [UInt8], recordName: String, recordType: String, fieldName: String,
                            zoneID: ZoneID?) async throws(CloudKitClientError) -> Asset {
        var token: JSONObject = ["recordType": .string(recordType), "fieldName": .string(fieldName), "recordName": .string(recordName)]
        if recordType.isEmpty { token["recordType"] = nil }
        var request: JSONObject = ["tokens": .array([.object(token)])]
        if let zoneID {
            var zone: JSONObject = ["zoneName": .string(zoneID.zoneName)]
            if let owner = zoneID.ownerRecordName { zone["ownerRecordName"] = .string(owner) }
            request["zoneID"] = .object(zone)
        }
        let answer = try await send("assets/upload", json: .object(request))
        guard case .object(let object)? = try? JSONValue(parsing: String(decoding: answer, as: UTF8.self)),
              case .object(let first)? = object["tokens"]?.arrayValue?.first, let url = first["url"]?.stringValue else {
            throw CloudKitClientError(.invalidResponse, "assets/upload: expected {tokens: [{url}]}, found another answer")
        }
        let stored = try await exchange(url: url, signedPath: nil, method: .POST, body: bytes, contentType: "application/octet-stream",
                                        label: "the upload of \(recordName).\(fieldName)")
        guard case .object(let file)? = (try? JSONValue(parsing: String(decoding: stored, as: UTF8.self)))?["singleFile"],
              let receipt = file["receipt"]?.stringValue else {
            throw CloudKitClientError(.invalidResponse, "the upload of \(recordName).\(fieldName): expected {singleFile: {receipt}}, found another answer")
        }
        return Asset(fileChecksum: file["fileChecksum"]?.stringValue, size: file["size"]?.numberValue?.int64Value,
                     referenceChecksum: file["referenceChecksum"]?.stringValue, wrappingKey: file["wrappingKey"]?.stringValue,
                     receipt: receipt)
    }

    /// The bytes of `asset`, from its `downloadURL` (`${f}` replaced by `fileName`), checked
    /// against its size and, when its checksum is a SHA-256 (as `ferry serve` writes), the checksum.
    public func downloadAsset(_ asset: Asset, fileName: String = "asset") async throws(CloudKitClientError) -> [UInt8] {
        guard let template = asset.downloadURL else {
            throw CloudKitClientError(.invalidResponse, "expected a downloadURL in the asset, found none")
        }
        let url = template.replacingOccurrences(of: "${f}", with: fileName)
        let bytes = try await exchange(url: url, signedPath: nil, method: .GET, body: nil, label: "the download of \(fileName)")
        if let size = asset.size, size != Int64(bytes.count) {
            throw CloudKitClientError(.invalidResponse, "the download of \(fileName): expected \(size) bytes, found \(bytes.count)")
        }
        if let checksum = asset.fileChecksum, Self.isSHA256Checksum(checksum) {
            var hasher = SHA256()
            hasher.update(bytes)
            guard Base64.encode(hasher.finalize()) == checksum else {
                throw CloudKitClientError(.invalidResponse, "the download of \(fileName): the bytes do not match the asset's fileChecksum \(checksum)")
            }
        }
        return bytes
    }

    /// Whether `checksum` is base64 of 32 bytes (SHA-256): what can be checked here. CloudKit's
    /// own checksums are another, undocumented form; their downloads are checked by size.
    static func isSHA256Checksum(_ checksum: String) -> Bool {
        checksum.utf8.count == 44 && checksum.hasSuffix("=") && !checksum.hasSuffix("==")
    }

    /// The name an asset's bytes are kept under in an assets folder: its checksum, made safe for
    /// a file name (`/` → `_`, `+` → `-`), so one file holds the bytes of every field that has them.
    public static func assetFileName(checksum: String) -> String {
        String(checksum.map { $0 == "/" ? "_" : $0 == "+" ? "-" : $0 })
    }
}

#endif
