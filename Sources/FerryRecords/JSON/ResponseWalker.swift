/// The one walker of CKWS response wrappers: every reader that meets a saved response —
/// decoding it (``RecordJSON/decodeDocument(_:configuration:)``), transcoding its records
/// (``RecordJSON/transcodeResponse(in:at:into:recordEnds:scratch:configuration:)``), cutting it
/// into runs of records for the workers (FerryJSON's splitter), reading it as change events
/// (FerryChangeLog's decoder), checking it (``JSONValidator``) — walks it with this type, and
/// learns what each part is from it.
///
/// It knows the wrapper's shapes (see `Docs/RecordJSON.md`): which members hold record entries
/// (`records`), zone entries (`zones`), tokens and markers (`continuationMarker`, `syncToken`,
/// `metaSyncToken`, `moreComing`) and errors (`serverErrorCode`, `reason`), all told apart by
/// ``CloudKitKey``; how an entry of `records` is a record, a tombstone or an error entry
/// (``entryKind(hasName:hasFields:hasErrorCode:isDeleted:)``); what a `zones` response is
/// (``ZonesShape``). Readers keep only what they make of each part — a model, bytes, runs,
/// events — and their own fast paths.
///
/// The walk is a cursor that readers drive — ``Members`` over an object's members,
/// ``RecordEntries`` over `records`, ``ZoneEntries`` over `zones` — each step a key named (or an
/// entry reached) with the scanner at its value; a reader's `switch` over ``CloudKitKey`` is its
/// callback for each part. A cursor costs what the reader's own loop cost, from any module.
/// Readers in FerryRecords walk with visitors instead (``walkMembers(_:first:_:)``,
/// ``walkZoneEntries(_:_:)``: one method per part, the walk generic over the visitor and
/// specialized for it); readers in other modules drive the cursors, since `package` bodies are
/// not inlined (nor generics specialized) across modules, and a walk unspecialized would cost a
/// witness call per member. Readers begin the wrapper object themselves (their messages say what
/// they expected); errors are the scanner's and the reader's, thrown as they come.
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

    // MARK: Cursors

    /// The members of an object, one after another: each key read (in place, or checked against
    /// the object's other keys) and named, with the scanner at the member's value (whitespace
    /// skipped); the reader reads or skips the value.
    ///
    /// ```swift
    /// var members = ResponseWalker.Members()        // the object's `{` consumed
    /// while let (member, key) = try members.next(&s) {
    ///     switch member { case .records?: …; case .syncToken?: …; default: try s.skipValue() }
    /// }
    /// ```
    package struct Members {
        @usableFromInline var first: Bool

        /// The members of the object the scanner is in (its `{` consumed); `first` as
        /// ``JSONScanner/nextMember(_:)`` wants it, so that a reader may match some members first.
        @inlinable
        package init(first: Bool = true) { self.first = first }

        /// The next member: its key read in place and what it names; `nil` after the `}`.
        @inlinable @inline(__always)
        package mutating func next(_ s: inout JSONScanner) throws(RecordFormatError) -> (member: CloudKitKey?, key: JSONKey)? {
            guard try s.nextMember(&first) else { return nil }
            let key = try s.readKey()
            s.skipWhitespace()
            return (key.cloudKitKey, key)
        }

        /// The next member: its key read with ``JSONScanner/readKey(recordingIn:from:)`` (which
        /// fails on a key the object had before: the keys of the object are those of `scratch`
        /// from `mark` on) and what it names; `nil` after the `}`.
        @inlinable @inline(__always)
        package mutating func next(_ s: inout JSONScanner, recordingIn scratch: inout JSONKeyScratch,
                                   from mark: Int) throws(RecordFormatError) -> (member: CloudKitKey?, key: JSONStringToken)? {
            guard try s.nextMember(&first) else { return nil }
            let key = try s.readKey(recordingIn: &scratch, from: mark)
            s.skipWhitespace()
            return (key.cloudKitKey(in: s), key)
        }
    }

    /// The entries of a `records` array, one after another, with the scanner at each entry's
    /// start: records, tombstones and error entries, which
    /// ``entryKind(hasName:hasFields:hasErrorCode:isDeleted:)`` tells apart.
    ///
    /// ```swift
    /// var entries = try ResponseWalker.RecordEntries(&s)
    /// while try entries.next(&s) { /* read the entry at s */ }
    /// ```
    package struct RecordEntries {
        @usableFromInline var first = true

        /// Begins the `records` array at the scanner.
        @inlinable
        package init(_ s: inout JSONScanner) throws(RecordFormatError) {
            try s.beginArray()
        }

        /// Moves to the next entry: `true` with the scanner at its start, `false` after the `]`.
        @inlinable @inline(__always)
        package mutating func next(_ s: inout JSONScanner) throws(RecordFormatError) -> Bool {
            try s.nextElement(&first)
        }
    }

    /// The entries of a `zones` array, one after another, each an object entered: a zone
    /// (`zoneID`) with its token, flags (`moreComing`, `deleted`, `purged`) and, in
    /// `changes/zone`, its `records`; or a zone's error entry (`serverErrorCode`, `reason`).
    /// Walk each entry's members with ``Members``.
    package struct ZoneEntries {
        @usableFromInline var first = true

        /// Begins the `zones` array at the scanner.
        @inlinable
        package init(_ s: inout JSONScanner) throws(RecordFormatError) {
            try s.beginArray()
        }

        /// Enters the next entry: where it starts, with the scanner after its `{`; `nil` after
        /// the `]`.
        @inlinable @inline(__always)
        package mutating func next(_ s: inout JSONScanner) throws(RecordFormatError) -> Int? {
            guard try s.nextElement(&first) else { return nil }
            let start = s.position
            try s.beginObject("a zone entry (an object)")
            return start
        }
    }

    // MARK: Visitor walks (within FerryRecords)

    /// Walks the members of the object the scanner is in (its `{` consumed; `first` as
    /// ``Members/init(first:)`` takes it), calling ``ResponseVisitor/visitMember(_:key:_:)`` for
    /// each. Returns `false` when the visitor stopped it, `true` after the object's `}`.
    @inlinable @inline(__always)
    package static func walkMembers<V: ResponseVisitor & ~Copyable>(_ s: inout JSONScanner, first: inout Bool,
                                                                   _ visitor: inout V) throws(RecordFormatError) -> Bool {
        var members = Members(first: first)
        defer { first = members.first }
        while let (member, key) = try members.next(&s) {
            guard try visitor.visitMember(member, key: key, &s) else { return false }
        }
        return true
    }

    /// Walks the `zones` array at the scanner: for each entry,
    /// ``ZoneEntryVisitor/beginZoneEntry(at:)``, then
    /// ``ZoneEntryVisitor/visitZoneEntryMember(_:key:_:)`` for each of its members, then
    /// ``ZoneEntryVisitor/endZoneEntry(_:_:)`` with the entry's range. Returns `false` when the
    /// visitor stopped it, `true` after the array's `]`.
    @inlinable @inline(__always)
    package static func walkZoneEntries<V: ZoneEntryVisitor & ~Copyable>(_ s: inout JSONScanner,
                                                                        _ visitor: inout V) throws(RecordFormatError) -> Bool {
        var entries = try ZoneEntries(&s)
        while let start = try entries.next(&s) {
            visitor.beginZoneEntry(at: start)
            var members = Members()
            while let (member, key) = try members.next(&s) {
                guard try visitor.visitZoneEntryMember(member, key: key, &s) else { return false }
            }
            guard try visitor.endZoneEntry(start..<s.position, &s) else { return false }
        }
        return true
    }
}

/// A reader in FerryRecords of a response wrapper's members (and of the members of objects read
/// as possibly one: a record), walked by ``ResponseWalker/walkMembers(_:first:_:)``.
package protocol ResponseVisitor: ~Copyable {
    /// One member: `member` is what its key names (`nil` for none of CloudKit's keys); the
    /// scanner is at its value, which the visitor reads or skips. `false` stops the walk.
    mutating func visitMember(_ member: CloudKitKey?, key: JSONKey, _ s: inout JSONScanner) throws(RecordFormatError) -> Bool
}

/// A reader in FerryRecords of the entries of a `zones` array, walked by
/// ``ResponseWalker/walkZoneEntries(_:_:)``.
package protocol ZoneEntryVisitor: ~Copyable {
    /// An entry starts at `start` (its `{` consumed).
    mutating func beginZoneEntry(at start: Int)
    /// One member of the entry: `member` is what its key names (`nil` for none of CloudKit's
    /// keys); the scanner is at its value. `false` stops the walk.
    mutating func visitZoneEntryMember(_ member: CloudKitKey?, key: JSONKey, _ s: inout JSONScanner) throws(RecordFormatError) -> Bool
    /// The entry at `range` ended. `false` stops the walk.
    mutating func endZoneEntry(_ range: Range<Int>, _ s: inout JSONScanner) throws(RecordFormatError) -> Bool
}
