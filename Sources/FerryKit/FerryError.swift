/// The one error FerryKit throws: a usage error (what was asked cannot be done as asked: an
/// output whose format cannot be told, a store written to standard output, two outputs naming
/// one file) or a data error (an input that cannot be read, a check that failed, a write that
/// failed), with the message a user reads and the error of the module underneath.
///
/// The `ferry` command exits 2 for a usage error and 1 for a data error (``exitCode``).
public struct FerryError: Error, CustomStringConvertible {
    /// Whose fault it is, and so how a command exits.
    public enum Kind: Sendable, Hashable {
        /// The request cannot be done as asked (exit 2).
        case usage
        /// The data or the system failed the request (exit 1).
        case data
    }

    /// Whose fault it is.
    public var kind: Kind
    /// What went wrong, said whole: what was expected and what was found, where.
    public var message: String
    /// The error of the module underneath (`StoreError`, `ArchiveError`, `RecordFormatError`…),
    /// when there is one.
    public var underlying: (any Error)?

    /// An error of `kind` saying `message`.
    public init(_ kind: Kind, _ message: String, underlying: (any Error)? = nil) {
        self.kind = kind
        self.message = message
        self.underlying = underlying
    }

    /// A usage error saying `message`.
    public static func usage(_ message: String) -> FerryError { FerryError(.usage, message) }

    /// A data error saying `message`.
    public static func data(_ message: String, underlying: (any Error)? = nil) -> FerryError {
        FerryError(.data, message, underlying: underlying)
    }

    /// `error` as a ``FerryError``: itself when it is one, else a data error whose message is
    /// the error's description.
    public init(wrapping error: any Error) {
        if let error = error as? FerryError {
            self = error
        } else {
            self.init(.data, String(describing: error), underlying: error)
        }
    }

    /// The exit code of the `ferry` command for this error: 2 for usage, 1 for data.
    public var exitCode: Int32 { kind == .usage ? 2 : 1 }

    /// The message.
    public var description: String { message }

    /// Runs `body`, turning whatever it throws into a ``FerryError`` (``init(wrapping:)``).
    package static func catching<T>(_ body: () throws -> T) throws(FerryError) -> T {
        do {
            return try body()
        } catch {
            throw FerryError(wrapping: error)
        }
    }
}
