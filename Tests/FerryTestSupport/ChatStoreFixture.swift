import FerryRecords
import FerryStore

/// A store of chat messages for the CloudKit service's tests, over the service directly and over
/// HTTP: messages m01… in the custom zone `Chats` of the private database (count = i, a big
/// INT64, a sentAt timestamp, tags, an unknown key) and n01… in its default zone.
public enum ChatStoreFixture {
    /// Makes the store in a fresh temporary folder and returns its path.
    public static func makeStore(messages: Int, inDefaultZone: Int, name: String = "chat.sqlite") throws -> String {
        let path = TestScratch.directory() + "/" + name
        let writer = try StoreWriter(path: path)
        for i in 1...messages {
            try writer.write(try RecordJSON.decodeRecord(message(i, zone: "Chats")))
        }
        for i in 1...inDefaultZone {
            try writer.write(try RecordJSON.decodeRecord(message(i, zone: nil, prefix: "n")))
        }
        try writer.finish()
        return path
    }

    /// The JSON of message `i` (`m01`, or `prefix` + two digits) in `zone` (`nil`: the default zone).
    public static func message(_ i: Int, zone: String?, prefix: String = "m") -> String {
        let name = prefix + (i < 10 ? "0" : "") + String(i)
        let zoneJSON = zone.map { #","zoneID":{"zoneName":"\#($0)","ownerRecordName":"_owner","zoneType":"REGULAR_CUSTOM_ZONE"}"# } ?? ""
        let tags = i % 3 == 0 ? #"["red","blue"]"# : #"["green"]"#
        return #"{"recordName":"\#(name)","recordType":"Message"\#(zoneJSON),"fields":{"text":{"value":"hello \#(i)","type":"STRING"},"#
            + #""count":{"value":\#(i),"type":"INT64"},"big":{"value":9007199254740993,"type":"INT64"},"#
            + #""sentAt":{"value":\#(1_700_000_000_000 + Int64(i) * 1000),"type":"TIMESTAMP"},"tags":{"value":\#(tags),"type":"STRING_LIST"}},"#
            + #""pluginFields":{},"recordChangeTag":"t\#(i)","created":{"timestamp":1700000000000,"userRecordName":"_owner"},"#
            + #""modified":{"timestamp":\#(1_700_000_000_000 + Int64(i)),"userRecordName":"_owner"},"deleted":false,"futureKey":{"kept":true}}"#
    }
}
