import FerryCompression
import FerryIO
import Testing

@Suite("Interoperability with the system gzip", .enabled(if: SystemGzip.path != nil))
struct SystemGzipTests {
    /// Text and incompressible bytes over several blocks of 64 KiB, the last one short.
    static let input = TestData.text(count: 400_000) + TestData.random(count: 100_000)

    @Test(
        "gzip -d reads our output and gzip -t accepts it",
        arguments: availableEngines, [(1, 6), (1, 9), (2, 0), (2, 1), (2, 6), (2, 9), (3, 6)]
    )
    func systemGzipReadsOurOutput(engine: GzipSink.Configuration.Engine, settings: (threads: Int, level: Int)) throws {
        let compressed = try Gzip.compress(Self.input, .init(level: settings.level, threads: settings.threads, blockSize: 64 << 10, engine: engine))
        let decompressed = try SystemGzip.run(["-d", "-c"], input: compressed)
        #expect(decompressed.status == 0)
        #expect(decompressed.output == Self.input)
        #expect(try SystemGzip.run(["-t"], input: compressed).status == 0)
    }

    @Test("pigz -d and pigz -t read our output", .enabled(if: SystemTool.pigz.path != nil), arguments: availableEngines)
    func pigzReadsOurOutput(engine: GzipSink.Configuration.Engine) throws {
        let compressed = try Gzip.compress(Self.input, .init(level: 6, threads: 2, blockSize: 64 << 10, engine: engine))
        let decompressed = try SystemTool.pigz.run(["-d", "-c"], input: compressed)
        #expect(decompressed.status == 0)
        #expect(decompressed.output == Self.input)
        #expect(try SystemTool.pigz.run(["-t"], input: compressed).status == 0)
    }

    @Test("zcat reads our output from standard input", .enabled(if: SystemTool.zcat.path != nil), arguments: availableEngines)
    func zcatReadsOurOutput(engine: GzipSink.Configuration.Engine) throws {
        let compressed = try Gzip.compress(Self.input, .init(level: 6, threads: 2, blockSize: 64 << 10, engine: engine))
        let decompressed = try SystemTool.zcat.run([], input: compressed, fileAsInput: true)
        #expect(decompressed.status == 0)
        #expect(decompressed.output == Self.input)
    }

    @Test("Python's gzip module reads our output, whole and as a stream", .enabled(if: SystemTool.python.path != nil),
          arguments: availableEngines)
    func pythonReadsOurOutput(engine: GzipSink.Configuration.Engine) throws {
        let compressed = try Gzip.compress(Self.input, .init(level: 6, threads: 2, blockSize: 64 << 10, engine: engine))
        let whole = "import gzip, sys; sys.stdout.buffer.write(gzip.decompress(sys.stdin.buffer.read()))"
        let decompressed = try SystemTool.python.run(["-c", whole], input: compressed, fileAsInput: true)
        #expect(decompressed.status == 0)
        #expect(decompressed.output == Self.input)
        let stream = "import gzip, shutil, sys; shutil.copyfileobj(gzip.GzipFile(fileobj=sys.stdin.buffer), sys.stdout.buffer, 4096)"
        let streamed = try SystemTool.python.run(["-c", stream], input: compressed, fileAsInput: true)
        #expect(streamed.status == 0)
        #expect(streamed.output == Self.input)
    }

    @Test("We read the output of gzip -c at every level", arguments: [1, 6, 9])
    func weReadSystemGzipOutput(level: Int) throws {
        let input = TestData.text(count: 300_000)
        // gzip -c FILE stores the file name in the header (FNAME).
        let compressed = try SystemGzip.run(["-c", "-\(level)"], input: input, fileName: "records.ndjson")
        #expect(compressed.status == 0)
        #expect(try Gzip.decompress(compressed.output) == input)
        #expect(try Gzip.decompress(compressed.output, chunkSize: 13) == input)
    }

    @Test("We read concatenated members from gzip and from ourselves, as cat a.gz b.gz gives")
    func concatenatedMembers() throws {
        let a = TestData.text(count: 100_000, seed: 3)
        let b = TestData.random(count: 50_000, seed: 4)
        let c = TestData.text(count: 70_000, seed: 5)
        let fromGzip = try SystemGzip.run(["-c"], input: a, fileName: "a").output
        let fromUs = try Gzip.compress(b, .init(threads: 2, blockSize: 32 << 10))
        let empty = try Gzip.compress([])
        let fromUsSerial = try Gzip.compress(c)
        let stream = fromGzip + fromUs + empty + fromUsSerial
        #expect(try Gzip.decompress(stream) == a + b + c)
        // And gzip itself agrees on the concatenation.
        #expect(try SystemGzip.run(["-d", "-c"], input: stream).output == a + b + c)
    }
}
