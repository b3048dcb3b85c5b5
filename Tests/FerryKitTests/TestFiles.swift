import FerryKit
import FerryTestSupport
import Foundation

/// Files the FerryKit tests read: written into a fresh scratch folder.
enum TestFiles {
    /// A new scratch folder.
    static func folder() -> String { TestScratch.directory() }

    /// Writes `text` to `path`.
    static func write(_ text: String, to path: String) throws {
        try text.write(toFile: path, atomically: false, encoding: .utf8)
    }

    /// Writes `bytes` to `path`.
    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// The bytes of the file at `path`.
    static func bytes(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// A sample of `Samples/`.
    static func sample(_ name: String) -> String { samplesDirectory() + "/" + name }

    /// Every record `path` holds, read through FerryKit, as canonical JSON.
    static func records(_ path: String) throws -> [String] {
        let reader = try InputRecognizer().openReader(path)
        var records: [String] = []
        while let record = try reader.next() { records.append(RecordJSON.encodedString(record)) }
        return records
    }
}
