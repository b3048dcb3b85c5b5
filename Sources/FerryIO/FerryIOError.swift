#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An error from opening, reading, writing or committing a file.
///
/// Carries the path, the operation that failed and the C `errno` when there is one.
public struct FerryIOError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What failed.
    public enum Operation: String, Sendable {
        case open, read, write, close, rename, remove, createTemporary = "create temporary file", seek, stat
    }

    /// The operation that failed.
    public var operation: Operation
    /// The file involved, or `-` for standard input/output.
    public var path: String
    /// The C `errno` value, when the failure came from a system call.
    public var errno: Int32?
    /// Extra human detail.
    public var detail: String?

    /// Creates an error.
    public init(_ operation: Operation, path: String, errno: Int32? = nil, detail: String? = nil) {
        self.operation = operation
        self.path = path
        self.errno = errno
        self.detail = detail
    }

    public var description: String {
        var text = "\(path): cannot \(operation.rawValue)"
        if let errno {
            text += ": " + String(cString: strerror(errno))
        }
        if let detail {
            text += ": " + detail
        }
        return text
    }
}
