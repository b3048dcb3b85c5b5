/// Checks the bytes where libxml2 stopped.
enum UTF8Check {
    /// Whether `bytes` begins with a byte sequence that is not UTF-8 (overlong forms, surrogates and
    /// values past U+10FFFF included); a sequence cut by the end of `bytes` counts only at EOF.
    static func startsInvalidSequence(_ bytes: UnsafeRawBufferPointer, atEOF: Bool) -> Bool {
        guard let lead = bytes.first else { return false }
        let (length, low, high): (Int, UInt8, UInt8)
        switch lead {
        case 0x00...0x7F: return false
        case 0xC2...0xDF: (length, low, high) = (2, 0x80, 0xBF)
        case 0xE0: (length, low, high) = (3, 0xA0, 0xBF)
        case 0xE1...0xEC, 0xEE, 0xEF: (length, low, high) = (3, 0x80, 0xBF)
        case 0xED: (length, low, high) = (3, 0x80, 0x9F)
        case 0xF0: (length, low, high) = (4, 0x90, 0xBF)
        case 0xF1...0xF3: (length, low, high) = (4, 0x80, 0xBF)
        case 0xF4: (length, low, high) = (4, 0x80, 0x8F)
        default: return true
        }
        for k in 1..<length {
            guard k < bytes.count else { return atEOF }
            let b = bytes[k]
            if k == 1 ? (b < low || b > high) : (b < 0x80 || b > 0xBF) { return true }
        }
        return false
    }
}
