/// Hexadecimal digits: writing bytes and integers as hex, and reading hex digits back.
///
/// Messages show bytes as `0x1f` (``prefixed(_:uppercase:)``) or as `1f 8b` (``string(_:separator:)``);
/// escapes write fixed-width digits (``digit(_:uppercase:)``, ``digits(of:width:uppercase:)``).
package enum Hex {
    /// The ASCII hex digit for the low four bits of `value`.
    @inlinable @inline(__always)
    package static func digit(_ value: UInt8, uppercase: Bool = false) -> UInt8 {
        let table: StaticString = uppercase ? "0123456789ABCDEF" : "0123456789abcdef"
        return table.utf8Start[Int(value & 15)]
    }

    /// The value of an ASCII hex digit (`0-9`, `a-f`, `A-F`), or `nil`.
    @inlinable @inline(__always)
    package static func value(of digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Two lowercase digits per byte, joined by `separator` (`1f8b`, or `1f 8b` with `" "`).
    package static func string(_ bytes: some Sequence<UInt8>, separator: String = "") -> String {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * (2 + separator.utf8.count))
        for byte in bytes {
            if !text.isEmpty { text += separator.utf8 }
            text.append(digit(byte >> 4))
            text.append(digit(byte))
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The digits of `value` with no leading zeros, or padded with zeros to `width`.
    package static func digits(of value: some BinaryInteger, width: Int = 1, uppercase: Bool = false) -> String {
        let text = String(value, radix: 16, uppercase: uppercase)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    /// `0x` and the digits of `value` with no leading zeros (`0x1f`), for messages.
    package static func prefixed(_ value: some BinaryInteger, uppercase: Bool = false) -> String {
        "0x" + digits(of: value, uppercase: uppercase)
    }
}
