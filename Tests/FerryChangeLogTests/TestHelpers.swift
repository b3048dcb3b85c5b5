@testable import FerryChangeLog
import FerryIO
import FerryRecords
import FerryTestSupport

/// Canonical JSON of each record (Ferry's encoding of the decoded record), for comparisons
/// that do not depend on how a history spelled a record.
func canonical(_ records: [Record]) -> [String] {
    records.map { RecordJSON.encodedString($0) }
}

/// Replays `bytes` fed `chunkSize` bytes at a time and finishes.
@discardableResult
func replay(_ bytes: [UInt8], _ configuration: Replayer.Configuration = .init(), base: ReplayState = ReplayState(),
            chunkSize: Int = .max, name: String = "history") throws -> Replayer {
    let replayer = Replayer(configuration: configuration, base: base)
    try replayer.apply(MemorySource(bytes, name: name, chunkSize: chunkSize))
    try replayer.finish()
    return replayer
}

/// Replays text.
@discardableResult
func replay(_ text: String, _ configuration: Replayer.Configuration = .init(), base: ReplayState = ReplayState()) throws -> Replayer {
    try replay(Array(text.utf8), configuration, base: base)
}

/// The configurations every history is replayed with: decoded on worker threads and on the
/// calling thread.
let decodingModes: [Int] = [2, 0]

/// The state's records as canonical JSON.
func contents(_ state: ReplayState) throws -> [String] {
    canonical(try state.records())
}

/// A zone of the hand-written histories.
let chats = #"{"zoneName":"Chats","ownerRecordName":"_o"}"#

/// A Ferry `recordSaved` line for a small record in Chats.
func saved(_ name: String, tag: String = "t1", modified: Int64 = 1, fields: String = #"{"n":{"value":1,"type":"INT64"}}"#,
           parent: String? = nil) -> String {
    let parentText = parent.map { #","parent":{"recordName":"\#($0)"}"# } ?? ""
    return #"{"event":"recordSaved","record":{"recordName":"\#(name)","recordType":"Item","zoneID":\#(chats),"recordChangeTag":"\#(tag)","modified":{"timestamp":\#(modified)}\#(parentText),"fields":\#(fields)}}"#
}

/// A Ferry `recordDeleted` line in Chats.
func deleted(_ name: String) -> String {
    #"{"event":"recordDeleted","recordName":"\#(name)","zoneID":\#(chats)}"#
}

/// A Ferry checkpoint line for Chats.
func checkpoint(_ token: String, moreComing: Bool = false) -> String {
    #"{"event":"checkpoint","zoneID":\#(chats),"syncToken":"\#(token)","moreComing":\#(moreComing)}"#
}

/// A `REFERENCE` field pointing at `name`.
func referenceField(_ name: String, action: String = "DELETE_SELF", field: String = "owner") -> String {
    #"{"\#(field)":{"value":{"recordName":"\#(name)","action":"\#(action)"},"type":"REFERENCE"}}"#
}
