import FerryInternals
import FerryIO

/// An asset's bytes held by the store (format version 2's `assets` table): uploaded, and attached
/// once a saved record names it by its receipt.
public struct StoreAsset: Sendable, Equatable {
    /// The receipt that names it (the upload's token).
    public var receipt: String
    /// Base64 of the SHA-256 of the bytes (CloudKit's `fileChecksum`).
    public var fileChecksum: String
    /// The number of bytes.
    public var size: Int64
    /// Whether a saved record names it.
    public var isAttached: Bool

    public init(receipt: String, fileChecksum: String, size: Int64, isAttached: Bool) {
        self.receipt = receipt
        self.fileChecksum = fileChecksum
        self.size = size
        self.isAttached = isAttached
    }
}

extension RecordStore {
    /// At most this many uploaded assets no record names are kept: the oldest go first.
    public static let maximumUnattachedAssets = 1024
    /// At most this many bytes of uploaded assets no record names are kept.
    public static let maximumUnattachedAssetBytes: Int64 = 512 << 20

    /// Whether the file has the `assets` table (format version 2 and later; an older store read
    /// as it is holds no assets).
    public var holdsAssets: Bool {
        ((try? connection.integer("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'assets'")) ?? 0) == 1
    }

    /// Keeps uploaded bytes under `receipt` (replacing what the receipt named), unattached, in one
    /// transaction that also drops the oldest unattached assets beyond
    /// ``maximumUnattachedAssets`` and ``maximumUnattachedAssetBytes``.
    @discardableResult
    public func storeAsset(_ bytes: [UInt8], receipt: String) throws -> StoreAsset {
        guard access == .readWrite else {
            throw StoreError(.invalidArgument, "expected a store opened for writing to keep an asset, found one opened read-only", path: path)
        }
        var hasher = SHA256()
        hasher.update(bytes)
        let asset = StoreAsset(receipt: receipt, fileChecksum: Base64.encode(hasher.finalize()), size: Int64(bytes.count), isAttached: false)
        try StoreWriter.beginWriting(self)
        do {
            let insert = try connection.prepare("""
                INSERT OR REPLACE INTO assets (receipt, checksum, size, bytes, uploaded_at, attached) VALUES (?1, ?2, ?3, ?4, ?5, 0)
                """)
            try insert.bind(receipt, at: 1)
            try insert.bind(asset.fileChecksum, at: 2)
            try insert.bind(asset.size, at: 3)
            try bytes.withUnsafeBytes { try insert.bind(copiedBlob: $0, at: 4) }
            try insert.bind(Syscall.nowMilliseconds(), at: 5)
            try insert.run()
            // The newest unattached assets within both bounds are kept.
            try connection.execute("""
                DELETE FROM assets WHERE attached = 0 AND id NOT IN (
                    SELECT id FROM (SELECT id, sum(size) OVER (ORDER BY id DESC) AS total, row_number() OVER (ORDER BY id DESC) AS n
                                    FROM assets WHERE attached = 0)
                    WHERE n <= \(Self.maximumUnattachedAssets) AND total <= \(Self.maximumUnattachedAssetBytes))
                """)
            try connection.execute("COMMIT")
        } catch {
            if !connection.isAutocommit { try? connection.execute("ROLLBACK") }
            throw error
        }
        return asset
    }

    /// The asset a receipt names, without its bytes; `nil` when the store holds none.
    public func asset(receipt: String) throws -> StoreAsset? {
        guard holdsAssets else { return nil }
        let statement = try connection.prepare("SELECT checksum, size, attached FROM assets WHERE receipt = ?1")
        try statement.bind(receipt, at: 1)
        guard try statement.step() else { return nil }
        return StoreAsset(receipt: receipt, fileChecksum: statement.text(at: 0) ?? "", size: statement.int64(at: 1),
                          isAttached: statement.int64(at: 2) != 0)
    }

    /// The bytes of the asset a receipt names; `nil` when the store holds none (an older store
    /// read as it is holds none).
    public func assetBytes(receipt: String) throws -> [UInt8]? {
        guard holdsAssets else { return nil }
        let statement = try connection.prepare("SELECT bytes FROM assets WHERE receipt = ?1")
        try statement.bind(receipt, at: 1)
        guard try statement.step() else { return nil }
        return Array(statement.blobBytes(at: 0))
    }

    /// Marks the assets of `receipts` attached (kept however many are uploaded after them).
    public func attachAssets(receipts: [String]) throws {
        guard !receipts.isEmpty else { return }
        guard access == .readWrite else {
            throw StoreError(.invalidArgument, "expected a store opened for writing to attach assets, found one opened read-only", path: path)
        }
        let update = try connection.prepare("UPDATE assets SET attached = 1 WHERE receipt = ?1")
        for receipt in receipts {
            try update.bind(receipt, at: 1)
            try update.run()
            update.reset()
        }
    }
}
