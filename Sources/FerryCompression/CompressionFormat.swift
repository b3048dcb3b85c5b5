/// A compressed format Ferry recognizes by its first bytes.
public enum CompressionFormat: String, Sendable, Hashable, CaseIterable {
    /// gzip (RFC 1952): starts with the magic bytes `1f 8b`.
    case gzip
}
