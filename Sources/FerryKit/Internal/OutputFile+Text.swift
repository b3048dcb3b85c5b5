import FerryIO

extension OutputFile {
    /// Writes `text` as UTF-8.
    package func write(_ text: String) throws {
        var text = text
        try text.withUTF8 { try write(UnsafeRawBufferPointer($0)) }
    }
}
