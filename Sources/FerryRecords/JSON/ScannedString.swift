extension String {
    /// A string from bytes the scanner has already checked to be valid UTF-8 (every string it
    /// returns has been: see ``JSONScanner/scanStringBody()``).
    ///
    /// Writes the bytes straight into the new string's storage (short ones with word moves, not
    /// a call to `memcpy`). Short ASCII strings (up to 15
    /// bytes: most keys, names and tags) are then taken as they are, where `String(decoding:as:)`
    /// would scan and validate them once more first.
    @inlinable
    init(scannedUTF8 bytes: UnsafeBufferPointer<UInt8>) {
        let count = bytes.count
        guard let source = bytes.baseAddress, count > 0 else {
            self = ""
            return
        }
        self.init(unsafeUninitializedCapacity: count) { buffer in
            ByteCopy.copy(source, to: buffer.baseAddress!, count: count)
            return count
        }
    }
}
