// ferry-load: a load generator for `ferry serve` (CloudKit Web Services over HTTP/1.1 keep-alive),
// loopback only and bounded in time. Each client is a thread with its own connection; see
// `LoadConfiguration.usage` or `ferry-load --help`, and Benchmarks/README.md ("serve").
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A client thread's entry point: runs the client passed (retained) as the argument.
private func clientThread(_ argument: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    Unmanaged<LoadClient>.fromOpaque(argument!).takeRetainedValue().run()
    return nil
}

/// The lines of `path`, without empty ones.
private func readLines(_ path: String) -> [String]? {
    guard let file = fopen(path, "r") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = fread(&chunk, 1, chunk.count, file)
        if n <= 0 { break }
        bytes += chunk[0..<n]
    }
    return bytes.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }
        .map { $0.hasSuffix("\r") ? String($0.dropLast()) : $0 }.filter { !$0.isEmpty }
}

/// Writes `lines`, one a line, to `path`; false when it cannot.
private func writeLines(_ lines: [String], to path: String) -> Bool {
    guard let file = fopen(path, "w") else { return false }
    var ok = true
    for line in lines where fputs(line + "\n", file) < 0 { ok = false }
    return fclose(file) == 0 && ok
}

private func fail(_ message: String, status: Int32) -> Never {
    let line = Array("ferry-load: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(status)
}

let configuration: LoadConfiguration
do {
    configuration = try LoadConfiguration(arguments: Array(CommandLine.arguments.dropFirst()))
} catch {
    if error.message.isEmpty {
        print(LoadConfiguration.usage)
        exit(0)
    }
    fail("\(error.message)\n\n\(LoadConfiguration.usage)", status: 2)
}

var names: [String] = []
if let path = configuration.namesFile {
    guard let lines = readLines(path) else { fail("cannot read --names \(path)", status: 2) }
    guard !lines.isEmpty else { fail("--names \(path) holds no name", status: 2) }
    names = lines
}

signal(SIGPIPE, SIG_IGN)
let builder = RequestBuilder(configuration: configuration, names: names)
// Clients connect first, then all start together; the deadline is the start plus the duration.
let startAt = now() + 0.2 + Double(configuration.clients) * 0.002
let deadline = startAt + configuration.duration
let clients = (0..<configuration.clients).map { LoadClient(index: $0, builder: builder, startAt: startAt, deadline: deadline) }
var threads: [pthread_t] = []
for client in clients {
    var thread = pthread_t()
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    pthread_attr_setstacksize(&attributes, 1 << 20)
    let rc = pthread_create(&thread, &attributes, clientThread, Unmanaged.passRetained(client).toOpaque())
    pthread_attr_destroy(&attributes)
    guard rc == 0 else { fail("cannot start client thread \(client.index): error \(rc)", status: 1) }
    threads.append(thread)
}
for thread in threads { pthread_join(thread, nil) }

let report = LoadReport(configuration: configuration, clients: clients, connections: clients.reduce(0) { $0 + $1.connections },
                        startAt: startAt)
if let path = configuration.acknowledgedFile, !writeLines(report.acknowledged, to: path) {
    fail("cannot write --acknowledged \(path)", status: 1)
}
if let path = configuration.unsettledFile, !writeLines(report.unsettled, to: path) {
    fail("cannot write --unsettled \(path)", status: 1)
}
if let path = configuration.jsonFile, !writeLines([report.json], to: path) {
    fail("cannot write --json-file \(path)", status: 1)
}
print(configuration.json ? report.json : report.table)
