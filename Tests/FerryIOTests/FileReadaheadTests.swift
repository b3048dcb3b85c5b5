import Dispatch
import Foundation
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

    @Test("a FIFO is not opened ahead: a writer waiting on it keeps waiting, and its bytes arrive whole")
    func fifoWithWriter() throws {
        let directory = temporaryDirectory()
        let fifo = directory + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        // A write to a FIFO nobody reads fails with EPIPE here instead of ending the tests.
        signal(SIGPIPE, SIG_IGN)
        final class Outcome: @unchecked Sendable { var opened = false; var written = -2 }
        let outcome = Outcome()
        let writer = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let fd = open(fifo, O_WRONLY) // waits for a reader
            outcome.opened = true
            usleep(50_000)
            outcome.written = write(fd, "data\n", 5)
            close(fd)
            writer.signal()
        }
        usleep(100_000)
        #expect(!outcome.opened)
        let readahead = FileReadahead([directory + "/before.json", fifo], window: 8)
        #expect(readahead.next() == directory + "/before.json")
        usleep(200_000)
        // Opened ahead, the FIFO would have let the writer go and then closed: its write failed.
        #expect(!outcome.opened, "the readahead opened the FIFO")
        let fd = open(fifo, O_RDONLY | O_NONBLOCK)
        #expect(fd >= 0)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        for _ in 0..<200 where received.count < 5 {
            let count = read(fd, &buffer, buffer.count)
            if count > 0 { received += buffer[..<count] } else { usleep(10_000) }
        }
        close(fd)
        _ = writer.wait(timeout: .now() + 5)
        #expect(String(decoding: received, as: UTF8.self) == "data\n")
        #expect(outcome.written == 5)
    }

    @Test("threads claiming files by index in any order together ask for every file")
    func concurrentOpening() {
        let paths = (0..<2000).map { "/nonexistent/ferry-readahead/\($0)" }
        let readahead = FileReadahead(paths, window: 16)
        DispatchQueue.concurrentPerform(iterations: paths.count) { readahead.opening($0) }
        #expect(readahead.requested == paths.count)
    }
}
