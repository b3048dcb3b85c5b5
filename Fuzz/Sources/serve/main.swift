// Request bodies for `ferry serve` (`CloudKitService.answer(_:)`): the first byte picks the
// endpoint (every CKWS operation, the asset upload and download URLs), the second the database
// and the method (POST, or GET when its top bit is set); the rest is the body (for the download
// URL, the path after `/assets/`). One read-write store per process, in a scratch folder; writes
// stay. Checks: no crash; every answer's body is UTF-8 JSON that parses, an object with a
// `serverErrorCode` string when the status is not 200 (a downloaded asset's bytes excepted); every
// answer says its content type.
import FerryCloudKit
import FerryRecords
import FerryStore
import FuzzDriver

/// The operations under `/database/1/{container}/development/{database}/`.
let operations = ["records/query", "records/lookup", "records/modify", "records/changes", "changes/zone", "changes/database",
                  "zones/changes", "zones/list", "zones/lookup", "zones/modify", "assets/upload"]
let databases = ["private", "public", "shared"]
let container = "iCloud.com.example.fuzz"

/// The service and its store, as statics (top-level globals of main.swift count as leaks at exit).
enum Fixture {
    // Used only on libFuzzer's one thread.
    nonisolated(unsafe) static let service: CloudKitService = {
        let path = fuzzScratchDirectory() + "/serve.sqlite"
        let writer = try! StoreWriter(path: path)
        for i in 0..<12 {
            let zone = i % 3 == 0 ? "" : #","zoneID":{"zoneName":"\#(i % 3 == 1 ? "Chats" : "Other")"}"#
            let json = #"{"recordName":"r\#(i)","recordType":"\#(i % 2 == 0 ? "Message" : "Note")"\#(zone),"#
                + #""fields":{"text":{"value":"hello \#(i)","type":"STRING"},"count":{"value":\#(i),"type":"INT64"},"#
                + #""tags":{"value":["a","b\#(i)"],"type":"STRING_LIST"},"at":{"value":\#(1_700_000_000_000 + i),"type":"TIMESTAMP"}}}"#
            try! writer.write(try! RecordJSON.decodeRecord(json))
        }
        try! writer.finish()
        return try! CloudKitService(storePath: path, configuration: .init(containerIdentifier: container, maximumBodyBytes: 32 << 10))
    }()
}

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let input = fuzzInput(data, size), input.count >= 2 else { return 0 }
    let endpoint = Int(input[0]) % (operations.count + 2)
    let database = databases[Int(input[1] & 0x7f) % databases.count]
    let method = input[1] & 0x80 == 0 ? "POST" : "GET"
    let body = Array(input[2...])
    let path: String
    var isDownload = false
    switch endpoint {
    case operations.count: path = CloudKitService.uploadPathPrefix + "0123456789abcdef0123456789abcdef"
    case operations.count + 1:
        path = CloudKitService.downloadPathPrefix + String(decoding: body, as: UTF8.self)
        isDownload = true
    default: path = "/database/1/\(container)/development/\(database)/\(operations[endpoint])"
    }
    let response = Fixture.service.answer(CloudKitRequest(method: method, path: path, body: isDownload ? [] : body))
    let contentType = response.headers.first { $0.name.lowercased() == "content-type" }?.value
    fuzzCheck(contentType != nil, "\(method) \(path): an answer without a content type (\(response.status))")
    if isDownload && response.status == 200 { return 0 }
    let text = String(validating: response.body, as: UTF8.self)
    fuzzCheck(text != nil, "\(method) \(path): an answer that is not UTF-8 (\(response.status))")
    let parsed: JSONValue
    do {
        parsed = try JSONValue(parsing: text ?? "")
    } catch {
        fuzzCheck(false, "\(method) \(path): an answer that is not JSON (\(response.status)): \(error)\n\(text ?? "")")
        return 0
    }
    fuzzCheck(parsed.objectValue != nil, "\(method) \(path): an answer that is not a JSON object (\(response.status))")
    if response.status != 200 {
        fuzzCheck(parsed["serverErrorCode"]?.stringValue?.isEmpty == false,
                  "\(method) \(path): a \(response.status) without a serverErrorCode:\n\(text ?? "")")
    }
    return 0
}

runFuzzer(testOneInput)
