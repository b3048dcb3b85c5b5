/// A zlib return code (`Z_OK`, `Z_DATA_ERROR`, …) as a Swift value.
public struct ZlibStatus: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The C return code.
    public var rawValue: Int32

    /// Wraps a zlib return code.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// `Z_OK`.
    public static let ok = ZlibStatus(rawValue: 0)
    /// `Z_STREAM_END`.
    public static let streamEnd = ZlibStatus(rawValue: 1)
    /// `Z_NEED_DICT`.
    public static let needDictionary = ZlibStatus(rawValue: 2)
    /// `Z_ERRNO`.
    public static let errno = ZlibStatus(rawValue: -1)
    /// `Z_STREAM_ERROR`.
    public static let streamError = ZlibStatus(rawValue: -2)
    /// `Z_DATA_ERROR`.
    public static let dataError = ZlibStatus(rawValue: -3)
    /// `Z_MEM_ERROR`.
    public static let memoryError = ZlibStatus(rawValue: -4)
    /// `Z_BUF_ERROR`.
    public static let bufferError = ZlibStatus(rawValue: -5)
    /// `Z_VERSION_ERROR`.
    public static let versionError = ZlibStatus(rawValue: -6)

    /// The C constant's name, such as `Z_DATA_ERROR`.
    public var description: String {
        switch rawValue {
        case 0: "Z_OK"
        case 1: "Z_STREAM_END"
        case 2: "Z_NEED_DICT"
        case -1: "Z_ERRNO"
        case -2: "Z_STREAM_ERROR"
        case -3: "Z_DATA_ERROR"
        case -4: "Z_MEM_ERROR"
        case -5: "Z_BUF_ERROR"
        case -6: "Z_VERSION_ERROR"
        default: "zlib code \(rawValue)"
        }
    }
}
