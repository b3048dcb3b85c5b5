import Foundation
import FerryArchive
import FerryIO
import FerryJSON
import FerryRecords

/// A fresh directory under the system temporary directory, removed when released.
final class ScratchDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "ferry-archive-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// `path/name`.
    func file(_ name: String) -> String { path + "/" + name }

    /// Every entry under the directory, relative, sorted.
    func listing() -> [String] {
        ((try? FileManager.default.subpathsOfDirectory(atPath: path)) ?? []).sorted()
    }
}

/// The result of running a tool.
struct ToolResult {
    var status: Int32
    var output: String
    var error: String
}

/// Runs `executable` (looked up on PATH) with `arguments` in `directory`. macOS `tar` is told
/// not to add `._*` AppleDouble members for extended attributes (`COPYFILE_DISABLE`).
@discardableResult
func runTool(_ executable: String, _ arguments: [String], in directory: String? = nil) throws -> ToolResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [executable] + arguments
    process.environment = ProcessInfo.processInfo.environment.merging(["COPYFILE_DISABLE": "1"]) { $1 }
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    let errData = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ToolResult(status: process.terminationStatus, output: String(decoding: outData, as: UTF8.self),
                      error: String(decoding: errData, as: UTF8.self))
}

/// Runs a Python 3 script with arguments; fails the test if it exits non-zero.
func runPython(_ script: String, _ arguments: [String] = [], in directory: String? = nil) throws {
    let result = try runTool("python3", ["-c", script] + arguments, in: directory)
    if result.status != 0 { throw ToolFailure(message: "python3 failed: \(result.error)") }
}

struct ToolFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// Records of an NDJSON file.
func readRecords(path: String) throws -> [Record] {
    let reader = NDJSONReader(source: try InputFile(path: path))
    var records: [Record] = []
    while let record = try reader.next() { records.append(record) }
    return records
}

/// Records as sorted compact JSON lines: equal exactly when the records are equal as a multiset.
func canonical(_ records: [Record]) -> [String] {
    records.map { RecordJSON.encodedString($0) }.sorted()
}

/// Every record of an archive, with the database it came from.
func readArchive(_ reader: ArchiveReader) throws -> [ArchiveRecord] {
    var records: [ArchiveRecord] = []
    while let record = try reader.nextRecord() { records.append(record) }
    return records
}

/// Reads a whole file.
func fileBytes(_ path: String) throws -> [UInt8] {
    try InputFile(path: path).readAll()
}

/// Writes bytes to a file.
func writeFile(_ path: String, _ bytes: [UInt8]) throws {
    let output = try OutputFile(path: path)
    try output.write(bytes)
    try output.commit()
}

/// Python that writes a Ferry manifest for the files under a directory and then packs them with
/// `tarfile`: argv = output, directory, then member paths in order; hostile entries come from
/// the environment-free `EXTRA` list defined by the caller's prefix.
let pythonManifestBuilder = #"""
import hashlib, json, os, sys
def manifest(root, members, zones):
    entries = []
    for path, kind in members:
        data = open(os.path.join(root, path), 'rb').read()
        entries.append({"path": path, "kind": kind, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()})
    return {"format": "ferry-archive", "formatVersion": 1, "createdAt": "2024-05-06T07:08:09.000Z",
            "ferryVersion": "hand-made", "zones": zones, "schema": {}, "members": entries}
"""#
