/// The one walker of CKWS response wrappers: every reader that meets a saved response —
/// decoding it (``RecordJSON/decodeDocument(_:configuration:)``), transcoding its records
/// (``RecordJSON/transcodeResponse(in:at:into:recordEnds:scratch:configuration:)``), cutting it
/// into runs of records for the workers (FerryNDJSON's splitter), reading it as change events
/// (FerryChangeLog's decoder) — walks it here, and is called back for each part.
///
/// It knows the wrapper's shapes (see `Docs/RecordJSON.md`): which members hold record entries
/// (`records`), zone entries (`zones`), tokens and markers (`continuationMarker`, `syncToken`,
/// `metaSyncToken`, `moreComing`) and errors (`serverErrorCode`, `reason`), all told apart by
/// ``CloudKitKey``; how an entry of `records` is a record, a tombstone or an error entry
/// (``entryKind(hasName:hasFields:hasErrorCode:isDeleted:)``); what a `zones` response is
/// (``ZonesShape``). Readers keep only what they make of each part — a model, bytes, runs,
/// events — and their own fast paths.
///
/// The walks are generic over the reader's visitor (which may be noncopyable, to hold buffers
/// of its own) and inlined into it, so each reader's walk is
/// compiled as its own loop: no closure, no existential, no allocation per member or entry.
/// Readers begin the wrapper object themselves (their messages say what they expected) and
/// hand the walk its members; the walk reads each key with the visitor's ``ResponseKeyReading``
/// (in place, or checked against the object's other keys), names it, and calls the visitor with
/// the scanner at the member's value. Any visitor method may return `false` to stop the walk (a
/// shape it does not take); errors are the scanner's and the visitor's, thrown as they come.
package enum ResponseWalker {
    /// What an entry of a `records` array is.
    package enum EntryKind: Equatable, Sendable {
        /// A record dictionary.
        case record
        /// A record dictionary with `"deleted": true`: a deleted record.
        case tombstone
        /// A per-record error entry (`serverErrorCode`, `reason`, …).
        case error
    }

    /// What an entry of a `records` array is, from its members: an error entry when it has a
    /// `serverErrorCode` and no `recordName` or no `fields` (CloudKit's error entries name a
    /// record, and may name its type; a record whose unknown members include a
    /// `serverErrorCode` still has fields); a tombstone when `deleted` is `true`; else a record.
    ///
    /// - Parameters:
    ///   - hasName: a `recordName` that is not `null`;
    ///   - hasFields: a `fields` member, `null` or not;
    ///   - hasErrorCode: a `serverErrorCode` that is a string (asked only when it matters).
    @inlinable @inline(__always)
    package static func entryKind(hasName: Bool, hasFields: Bool, hasErrorCode: @autoclosure () -> Bool, isDeleted: Bool) -> EntryKind {
        if (!hasName || !hasFields) && hasErrorCode() { return .error }
        return isDeleted ? .tombstone : .record
    }

    /// What a response with a `zones` array is, as far as its shape tells.
    package enum ZonesShape: String, Sendable {
        /// Entries with their changed records (the only shape that carries records).
        case changesZone = "changes/zone"
        /// The legacy database changes: a `metaSyncToken`.
        case zonesChanges = "zones/changes"
        /// The database's zone changes: a database `syncToken`.
        case changesDatabase = "changes/database"
        /// Zones and no token (`zones/lookup` and `zones/modify` answers look alike).
        case zonesList = "zones/list"

        /// Whether its entries are changes of zones (saved, `deleted`, `purged`) up to a database
        /// token, not merely zones.
        package var listsZoneChanges: Bool { self == .zonesChanges || self == .changesDatabase }
    }

    /// The shape of a `zones` response: `carriesRecords` when an entry has `records`; the
    /// response's own tokens otherwise.
    @inlinable
    package static func zonesShape(carriesRecords: Bool, hasMetaSyncToken: Bool, hasSyncToken: Bool) -> ZonesShape {
        if carriesRecords { return .changesZone }
        if hasMetaSyncToken { return .zonesChanges }
        if hasSyncToken { return .changesDatabase }
        return .zonesList
    }

    /// The token up to which a response without records lists zone changes: its database token
    /// (`syncToken`, else the legacy `metaSyncToken`); `nil` for a listing of zones, not changes.
    @inlinable
    package static func databaseToken(syncToken: String?, metaSyncToken: String?) -> String? {
        syncToken ?? metaSyncToken
    }

    // MARK: Walks

    /// Walks the members of the object the scanner is in (its `{` consumed; `first` as
    /// ``JSONScanner/nextMember(_:)`` wants it, so a reader may have matched some members first),
    /// calling ``ResponseVisitor/visitMember(_:key:_:)`` for each with the scanner at its value.
    /// Returns `false` when the visitor stopped it, `true` after the object's `}`.
    @inlinable @inline(__always)
    package static func walkMembers<V: ResponseVisitor & ~Copyable>(_ s: inout JSONScanner, first: inout Bool,
                                                        _ visitor: inout V) throws(RecordFormatError) -> Bool {
        while try s.nextMember(&first) {
            let key = try visitor.readKey(&s)
            s.skipWhitespace()
            guard try visitor.visitMember(key.cloudKitKey(in: s), key: key, &s) else { return false }
        }
        return true
    }

    /// Walks the `records` array at the scanner: ``RecordEntryVisitor/visitRecordEntry(_:)`` for
    /// each entry, with the scanner at its start. Returns `false` when the visitor stopped it,
    /// `true` after the array's `]`.
    @inlinable @inline(__always)
    package static func walkRecordEntries<V: RecordEntryVisitor & ~Copyable>(_ s: inout JSONScanner,
                                                                 _ visitor: inout V) throws(RecordFormatError) -> Bool {
        try s.beginArray()
        var first = true
        while try s.nextElement(&first) {
            guard try visitor.visitRecordEntry(&s) else { return false }
        }
        return true
    }

    /// Walks the `zones` array at the scanner: for each entry (an object),
    /// ``ZoneEntryVisitor/beginZoneEntry(at:)``, then
    /// ``ZoneEntryVisitor/visitZoneEntryMember(_:key:_:)`` for each of its members with the
    /// scanner at its value, then ``ZoneEntryVisitor/endZoneEntry(_:_:)`` with the entry's
    /// range. Returns `false` when the visitor stopped it, `true` after the array's `]`.
    @inlinable @inline(__always)
    package static func walkZoneEntries<V: ZoneEntryVisitor & ~Copyable>(_ s: inout JSONScanner,
                                                             _ visitor: inout V) throws(RecordFormatError) -> Bool {
        try s.beginArray()
        var first = true
        while try s.nextElement(&first) {
            let start = s.position
            visitor.beginZoneEntry(at: start)
            try s.beginObject("a zone entry (an object)")
            var firstMember = true
            while try s.nextMember(&firstMember) {
                let key = try visitor.readKey(&s)
                s.skipWhitespace()
                guard try visitor.visitZoneEntryMember(key.cloudKitKey(in: s), key: key, &s) else { return false }
            }
            guard try visitor.endZoneEntry(start..<s.position, &s) else { return false }
        }
        return true
    }
}

/// How a visitor of ``ResponseWalker`` reads member keys.
package protocol ResponseKeyReading: ~Copyable {
    /// A key as read: a ``JSONKey`` (read in place), or a ``JSONStringToken`` (read with
    /// ``JSONScanner/readKey(recordingIn:from:)``, which fails on a key the object had before).
    associatedtype Key: CloudKitKeyName
    /// Reads the member key at the scanner and the `:` after it.
    mutating func readKey(_ s: inout JSONScanner) throws(RecordFormatError) -> Key
}

/// A reader of a response wrapper's members (and of the members of objects read as possibly
/// one: a record, a change event).
package protocol ResponseVisitor: ResponseKeyReading, ~Copyable {
    /// One member: `member` is what its key names (`nil` for none of CloudKit's keys); the
    /// scanner is at its value, which the visitor reads or skips. `false` stops the walk.
    mutating func visitMember(_ member: CloudKitKey?, key: Key, _ s: inout JSONScanner) throws(RecordFormatError) -> Bool
}

/// A reader of the entries of a `records` array: records, tombstones and error entries
/// (``ResponseWalker/entryKind(hasName:hasFields:hasErrorCode:isDeleted:)`` tells them apart).
package protocol RecordEntryVisitor: ~Copyable {
    /// One entry, at the scanner: the visitor reads or skips it. `false` stops the walk.
    mutating func visitRecordEntry(_ s: inout JSONScanner) throws(RecordFormatError) -> Bool
}

/// A reader of the entries of a `zones` array: a zone (`zoneID`) with its token, flags
/// (`moreComing`, `deleted`, `purged`) and, in `changes/zone`, its `records`; or a zone's error
/// entry (`serverErrorCode`, `reason`).
package protocol ZoneEntryVisitor: ResponseKeyReading, ~Copyable {
    /// An entry starts at `start` (its `{` not consumed yet).
    mutating func beginZoneEntry(at start: Int)
    /// One member of the entry: `member` is what its key names (`nil` for none of CloudKit's
    /// keys); the scanner is at its value. `false` stops the walk.
    mutating func visitZoneEntryMember(_ member: CloudKitKey?, key: Key, _ s: inout JSONScanner) throws(RecordFormatError) -> Bool
    /// The entry at `range` ended. `false` stops the walk.
    mutating func endZoneEntry(_ range: Range<Int>, _ s: inout JSONScanner) throws(RecordFormatError) -> Bool
}
