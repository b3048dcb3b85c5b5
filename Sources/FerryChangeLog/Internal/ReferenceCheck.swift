import CFerrySystem
import FerryRecords

/// The check of a final state's parents and references: each must name a live record.
///
/// `@unchecked Sendable`: it only reads the storage, which nothing changes while it runs (the
/// zones' sorted orders are computed before), and its report is read after it finished.
final class ReferenceCheck: @unchecked Sendable {
    private let storage: ReplayStorage
    private let zoneOrder: [Int]
    /// What the check found: dangling parents and references, listed up to the limit given.
    private(set) var report: AnomalyReport

    init(storage: ReplayStorage, zoneOrder: [Int], limit: Int) {
        self.storage = storage
        self.zoneOrder = zoneOrder
        report = AnomalyReport(limit: limit)
    }

    func run() {
        var scanner = RecordScanner()
        for i in zoneOrder {
            let zone = storage.zones[i]
            let table = zone.table
            table.sortedBlobs.withUnsafeBufferPointer { blobs in
                for k in blobs.indices {
                    prefetch(blobs, k, table)
                    check(blobs[k], zone: zone, table: table, scanner: &scanner)
                }
            }
        }
    }

    /// How far ahead the check loads what it needs: a record three stages ahead (its header and
    /// references, then the table slots its references name, then the records in those slots).
    private static let stage = 6

    /// Loads ahead for record `k`'s successors: lookups are bound by memory latency.
    @inline(__always)
    private func prefetch(_ blobs: UnsafeBufferPointer<RecordBlob>, _ k: Int, _ table: RecordTable) {
        let n = blobs.count
        if k + 3 * Self.stage < n { CFerrySystem_prefetch(blobs[k + 3 * Self.stage].raw + RecordBlob.headerSize) }
        if k + 2 * Self.stage < n {
            blobs[k + 2 * Self.stage].forEachReference { reference in
                if reference.zone == nil { table.prefetch(hash: RecordBlob.hash(of: reference.name)) }
            }
        }
        if k + Self.stage < n {
            blobs[k + Self.stage].forEachReference { reference in
                if reference.zone == nil { table.prefetchRecord(hash: RecordBlob.hash(of: reference.name)) }
            }
        }
    }

    /// Checks the references of one record.
    @inline(__always)
    private func check(_ blob: RecordBlob, zone: ZoneState, table: RecordTable, scanner: inout RecordScanner) {
        var fields: [String?]?
        var position = 0
        blob.forEachReference { reference in
            defer { position += 1 }
            var target = table
            if let other = reference.zone {
                guard let index = storage.zoneIndex[ZoneKey(other.zoneID)] else {
                    found(reference, position: position, zone: zone, blob: blob, fields: &fields, scanner: &scanner)
                    return
                }
                target = storage.zones[index].table
            }
            if target.find(reference.name, hash: RecordBlob.hash(of: reference.name)) == nil {
                found(reference, position: position, zone: zone, blob: blob, fields: &fields, scanner: &scanner)
            }
        }
    }

    private func found(_ reference: BlobReference, position: Int, zone: ZoneState, blob: RecordBlob, fields: inout [String?]?,
                       scanner: inout RecordScanner) {
        let kind: ReplayAnomaly.Kind = reference.isParent ? .danglingParent : .danglingReference
        guard !report.isFull else {
            report.count(kind)
            return
        }
        if fields == nil { fields = scanner.referenceFields(ofJSON: blob.json) }
        let field = position < fields!.count ? fields![position] : nil
        let what = reference.isParent ? "parent" : "field \"\(field ?? "")\""
        report.add(.init(kind: kind, zoneID: zone.zoneID, recordName: blob.nameString,
                         detail: "\(what) points at \"\(String(decoding: reference.name, as: UTF8.self))\", which the final state does not hold"))
    }
}
