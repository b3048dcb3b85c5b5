import FerryKit
import FerryTestSupport
import Foundation
import Testing

@Suite("Opening inputs by path")
struct InputRecognizerTests {
    @Test("Every format is recognized by content, whatever the file is named")
    func recognizedByContent() throws {
        let folder = TestFiles.folder()
        let outputs: [(name: String, format: RecordFormat, gzip: Bool, expected: RecordFormat)] = [
            ("plain.data", .ndjson, false, .ndjson), ("compressed.data", .ndjson, true, .ndjson), ("document.data", .xml, false, .xml),
            ("bundle.data", .archive, false, .archive), ("store.data", .store, false, .store),
        ]
        for output in outputs {
            let path = folder + "/" + output.name
            try Conversion(configuration: .init(inputs: [TestFiles.sample("chat.ndjson")], output: path,
                                                writing: .init(format: output.format, gzip: output.gzip))).run()
            let opened = try InputRecognizer().open(path)
            #expect(opened.format == output.expected, "\(output.name)")
            #expect(opened.path == path)
            #expect(try TestFiles.records(path).count == 5, "\(output.name)")
        }
    }

    @Test("A stream (a pipe, as standard input is) is opened and read like a file")
    func stream() throws {
        let pipe = Pipe()
        let lines = try String(contentsOfFile: TestFiles.sample("chat.ndjson"), encoding: .utf8)
        pipe.fileHandleForWriting.write(Data(lines.utf8))
        try pipe.fileHandleForWriting.close()
        let path = "/dev/fd/\(pipe.fileHandleForReading.fileDescriptor)"
        guard case .ndjson(let name, _) = try InputRecognizer().open(path) else {
            Issue.record("a pipe of NDJSON is not NDJSON")
            return
        }
        #expect(name == path)
        let pipeAgain = Pipe()
        pipeAgain.fileHandleForWriting.write(Data(lines.utf8))
        try pipeAgain.fileHandleForWriting.close()
        #expect(try TestFiles.records("/dev/fd/\(pipeAgain.fileHandleForReading.fileDescriptor)")
                == TestFiles.records(TestFiles.sample("chat.ndjson")))
    }

    @Test("An empty input whose name promises content is a data error saying what was expected")
    func emptyPromisedInput() throws {
        let folder = TestFiles.folder()
        for (name, expected) in [("e.ndjson.gz", "a gzip stream"), ("e.xml", "an XML document"), ("e.tar", "a tar archive")] {
            try TestFiles.write("", to: folder + "/" + name)
            #expect {
                _ = try InputRecognizer().open(folder + "/" + name)
            } throws: { error in
                guard let error = error as? FerryError else { return false }
                return error.kind == .data && error.exitCode == 1
                    && error.message == "\(folder)/\(name): expected \(expected), found an empty file"
            }
        }
        // Empty NDJSON is no records.
        try TestFiles.write("", to: folder + "/e.ndjson")
        #expect(try TestFiles.records(folder + "/e.ndjson").isEmpty)
    }

    @Test("A folder is read as its files in name order, telling what its listing skipped")
    func folder() throws {
        let folder = TestFiles.folder()
        try TestFiles.write(try String(contentsOfFile: TestFiles.sample("chat.ndjson"), encoding: .utf8), to: folder + "/a.ndjson")
        try TestFiles.write(try String(contentsOfFile: TestFiles.sample("shopping.ndjson"), encoding: .utf8), to: folder + "/b.ndjson")
        try TestFiles.write("", to: folder + "/.hidden")
        var notes: [String] = []
        let reader = try InputRecognizer().openReader(folder, onNote: { notes.append($0) })
        var count = 0
        while try reader.next() != nil { count += 1 }
        #expect(try count == TestFiles.records(TestFiles.sample("chat.ndjson")).count + TestFiles.records(TestFiles.sample("shopping.ndjson")).count)
        #expect(notes.count == 1)
        #expect(notes.first?.hasPrefix("\(folder): skipped 1 entry (hidden, SQLite sidecar files,") == true)
        #expect(notes.first?.hasSuffix(".hidden") == true)
    }

    @Test("The registry names formats by extension, and says which are compressed", arguments: [
        ("a.ndjson", RecordFormat.ndjson), ("a.JSONL.gz", .ndjson), ("a.xml.gz", .xml), ("a.tgz", .archive), ("a.tar", .archive),
        ("a.sqlite3", .store), ("a.gz", nil), ("a.txt", nil),
    ] as [(String, RecordFormat?)])
    func registry(name: String, format: RecordFormat?) {
        #expect(RecordFormat(path: name) == format)
    }

    @Test("Compression follows the name: .gz for NDJSON and XML, an archive unless .tar, never a store")
    func compression() {
        #expect(RecordFormat.ndjson.compresses("a.ndjson.gz", gzip: false))
        #expect(!RecordFormat.ndjson.compresses("a.ndjson", gzip: false))
        #expect(RecordFormat.xml.compresses("a.xml", gzip: true))
        #expect(RecordFormat.archive.compresses("a.tar.gz", gzip: false))
        #expect(!RecordFormat.archive.compresses("a.tar", gzip: false))
        #expect(!RecordFormat.store.compresses("a.sqlite", gzip: true))
    }
}
