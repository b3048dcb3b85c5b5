@testable import FerryCLI
import FerryIO
import FerryTestSupport
import Foundation
import Testing

/// An output's format comes from `--to` or its name; a name Ferry cannot read a format from is a
/// usage error, not NDJSON under a misleading name.
@Suite("Output formats")
struct OutputFormatTests {
    let samples = samplesDirectory()

    @Test("A device or pipe as the output (/dev/null) is written NDJSON, as standard output is")
    func deviceOutput() throws {
        let (code, _, error) = try runBinary(["convert", samples + "/chat.ndjson", "/dev/null", "--quiet"])
        #expect(code == 0, "\(error)")
        let (skipCode, _, skipError) = try runBinary(["convert", samples + "/chat.ndjson", "/dev/null", "--on-error", "skip",
                                                      "--rejects", "/dev/null", "--quiet"])
        #expect(skipCode == 0, "\(skipError)")
        // replay writes no tokens file beside a device (it would be /dev/null.tokens.json).
        let (replayCode, _, replayError) = try runBinary(["replay", samples + "/chat-history.ndjson", "--out", "/dev/null", "--quiet"])
        #expect(replayCode == 0, "\(replayError)")
        #expect(!FileSystem.exists("/dev/null.tokens.json"))
    }

    @Test("An output whose extension is unknown, without --to, is a usage error listing the known extensions",
          arguments: ["out.bogus", "out.txt", "out", "out.sqlite.gz", "out.tar.bz2"])
    func unknownExtension(name: String) throws {
        let directory = scratchDirectory()
        let (code, _, error) = try runBinary(["convert", samples + "/chat.ndjson", directory + "/" + name])
        #expect(code == 2)
        #expect(error.contains(name) && error.contains(".ndjson") && error.contains(".tar.gz") && error.contains("--to"), "\(error)")
        #expect(FileSystem.entries(in: directory).isEmpty)
        let (replayCode, _, replayError) = try runBinary(["replay", samples + "/chat-history.ndjson", "--out", directory + "/" + name])
        #expect(replayCode == 2)
        #expect(replayError.contains("--to"), "\(replayError)")
        #expect(FileSystem.entries(in: directory).isEmpty)
    }

    @Test("--to names the format whatever the name, and standard output is NDJSON")
    func declaredFormat() throws {
        let directory = scratchDirectory()
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", directory + "/out.txt", "--to", "ndjson", "--quiet"]) == 0)
        #expect(try records(at: directory + "/out.txt") == records(at: samples + "/chat.ndjson"))
        let (code, out, _) = try runBinary(["convert", samples + "/chat.ndjson", "-", "--quiet"])
        #expect(code == 0)
        #expect(out.split(separator: "\n").count == 5)
    }

    @Test("An archive named .tar is a plain tar, which Ferry reads back; .tar.gz and .tgz are gzipped",
          arguments: [("a.tar", false), ("a.tar.gz", true), ("a.tgz", true), ("A.TAR", false)])
    func tarOutput(name: String, isGzip: Bool) throws {
        let directory = scratchDirectory()
        let path = directory + "/" + name
        #expect(Ferry.execute(["convert", samples + "/chat.ndjson", path, "--quiet"]) == 0)
        let bytes = try InputFile(path: path).readAll()
        #expect((bytes.prefix(2) == [0x1F, 0x8B]) == isGzip)
        if !isGzip { #expect(Array(bytes[257..<262]) == Array("ustar".utf8)) }
        #expect(Ferry.execute(["verify", path, "--quiet"]) == 0)
        #expect(Ferry.execute(["convert", path, directory + "/back.ndjson", "--quiet"]) == 0)
        #expect(try records(at: directory + "/back.ndjson").count == 5)
    }
}
