/// An asset field (`ASSETID`): the file's checksum and size plus the server's receipts and URL.
///
/// JSON: `{"fileChecksum", "size", "referenceChecksum"?, "wrappingKey"?, "receipt"?, "downloadURL"?}`.
public struct Asset: Hashable, Sendable {
    /// Base64 SHA-256 based checksum of the file; names the asset in archives.
    public var fileChecksum: String?
    /// Size in bytes.
    public var size: Int64?
    public var referenceChecksum: String?
    public var wrappingKey: String?
    public var receipt: String?
    /// A signed URL template containing `${f}`.
    public var downloadURL: String?
    /// Members Ferry does not know, kept in order and written back.
    public var unknownKeys: JSONObject

    public init(fileChecksum: String? = nil, size: Int64? = nil, referenceChecksum: String? = nil,
                wrappingKey: String? = nil, receipt: String? = nil, downloadURL: String? = nil,
                unknownKeys: JSONObject = JSONObject()) {
        self.fileChecksum = fileChecksum
        self.size = size
        self.referenceChecksum = referenceChecksum
        self.wrappingKey = wrappingKey
        self.receipt = receipt
        self.downloadURL = downloadURL
        self.unknownKeys = unknownKeys
    }
}
