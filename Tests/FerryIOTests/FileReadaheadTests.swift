import Dispatch
@testable import FerryIO
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("Reading the next input files ahead")
struct FileReadaheadTests {
    @Test("paths come out in order, each once, with the window ahead of the one handed out")
    func order() throws {
        let directory = temporaryDirectory()
        var paths: [String] = []
        for index in 0..<10 {
            let path = directory + "/f\(index).json"
            let file = try OutputFile(path: path)
            try file.write(Array("{\"n\": \(index)}".utf8))
            try file.commit()
            paths.append(path)
        }
        let readahead = FileReadahead(paths, window: 3)
        #expect(readahead.requested == 0)
        #expect(readahead.next() == paths[0])
        #expect(readahead.requested == 4)
        var rest: [String] = []
        while let path = readahead.next() { rest.append(path) }
        #expect(rest == Array(paths[1...]))
        #expect(readahead.requested == 10)
        #expect(readahead.next() == nil)
    }

    @Test("what cannot be read ahead is left to the read: missing files, folders, a FIFO nobody writes, stdin")
    func nothingBlocksOrFails() throws {
        let directory = temporaryDirectory()
        let fifo = directory + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let paths = [directory + "/missing.json", directory, fifo, "-"]
        let readahead = FileReadahead(paths, window: 8)
        var seen: [String] = []
        while let path = readahead.next() { seen.append(path) }
        #expect(seen == paths)
    }

    @Test("threads claiming files by index in any order together ask for every file")
    func concurrentOpening() {
        let paths = (0..<2000).map { "/nonexistent/ferry-readahead/\($0)" }
        let readahead = FileReadahead(paths, window: 16)
        DispatchQueue.concurrentPerform(iterations: paths.count) { readahead.opening($0) }
        #expect(readahead.requested == paths.count)
    }
}
