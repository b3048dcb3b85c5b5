extension String {
    /// A string from bytes the scanner has already checked to be valid UTF-8 (every string it
    /// returns has been: see ``JSONScanner/scanStringBody()`` and ``UTF8Check``); `isASCII` when
    /// it found no byte above 0x7F.
    ///
    /// Short strings (up to 15 bytes: most keys, names and tags) are written straight into the
    /// new small string, with word moves, not a call to `memcpy`. Longer ones are copied through
    /// a `UTF8Span` made without checking, because the scanner has checked: the other ways to
    /// make a string (`String(decoding:as:)`, `init(unsafeUninitializedCapacity:…)`) scan and
    /// validate the bytes once more, which took about as long as allocating and copying them.
    @inlinable
    init(scannedUTF8 bytes: UnsafeBufferPointer<UInt8>, isASCII: Bool = false) {
        let count = bytes.count
        guard let source = bytes.baseAddress, count > 0 else {
            self = ""
            return
        }
        if count > 15, #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
            self = String(copying: unsafe UTF8Span(unchecked: bytes.span, isKnownASCII: isASCII))
            return
        }
        self.init(unsafeUninitializedCapacity: count) { buffer in
            ByteCopy.copy(source, to: buffer.baseAddress!, count: count)
            return count
        }
    }
}
