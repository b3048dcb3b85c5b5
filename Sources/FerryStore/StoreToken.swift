/// The store's own change token: a position in its journal.
///
/// Written `fs1.<storeID>.<sequence>` (`fs1.3f9a0c4e5d6b7a81.1042`). Like CloudKit's tokens it is
/// meant to be passed back, not read: ``RecordStore/changes(since:)`` returns what changed after
/// it. The store ID guards against a token of another store; the sequence only grows.
public struct StoreToken: Hashable, Sendable, CustomStringConvertible {
    /// The ID of the store the token belongs to.
    public var storeID: String
    /// The journal sequence number: every change up to it is covered.
    public var sequence: Int64

    /// Creates a token.
    public init(storeID: String, sequence: Int64) {
        self.storeID = storeID
        self.sequence = sequence
    }

    /// Reads a token's text.
    ///
    /// - Throws: ``StoreError`` with ``StoreError/Code-swift.enum/invalidToken`` saying what was expected.
    public init(parsing text: String) throws {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "fs1", !parts[1].isEmpty, let sequence = Int64(parts[2]), sequence >= 0 else {
            throw StoreError(.invalidToken, "expected a store change token fs1.<storeID>.<sequence>, found \"\(text)\"")
        }
        storeID = String(parts[1])
        self.sequence = sequence
    }

    /// The token's text.
    public var description: String { "fs1.\(storeID).\(sequence)" }
}
