import FerryKit
import FerryTestSupport
import Foundation
import Testing

@Suite("Examples")
struct ExampleTests {
    /// The built example program (debug, else release).
    static func binary(_ name: String) throws -> String {
        let root = samplesDirectory().replacingOccurrences(of: "/Samples", with: "")
        let candidates = [root + "/.build/debug/" + name, root + "/.build/release/" + name]
        guard let path = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw FerryError.data("\(name) is not built at \(candidates)")
        }
        return path
    }

    @Test("ConvertAndQuery converts a folder of saved query responses into a store and queries it")
    func convertAndQuery() throws {
        let folder = TestFiles.folder()
        try FileManager.default.createDirectory(atPath: folder + "/responses", withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: TestFiles.sample("query-response.json"), toPath: folder + "/responses/page-1.json")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Self.binary("ferry-example-convert-and-query"))
        process.arguments = [folder + "/responses", folder + "/chat.sqlite"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(printed == """
            converted 3 records into \(folder)/chat.sqlite
            Q0000000-0000-4000-8000-000000000003  99  \(try text(of: "Q0000000-0000-4000-8000-000000000003"))
            Q0000000-0000-4000-8000-000000000001  60  hello from the API
            no more pages

            """)
    }

    /// The `text` field of the sample response's record named `name`.
    private func text(of name: String) throws -> String {
        let reader = try InputRecognizer().openReader(TestFiles.sample("query-response.json"))
        while let record = try reader.next() {
            if record.recordName == name { return record[field: "text"]?.stringValue ?? "" }
        }
        return ""
    }
}
