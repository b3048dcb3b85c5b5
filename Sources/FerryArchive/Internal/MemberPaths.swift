import FerryRecords

/// The member paths an archive being written has handed out, and to whom (a zone, an asset, a
/// change log, described for messages). A path another claimant holds is refused with both
/// named, so two zones whose names would spell one path never share a member.
struct MemberPaths {
    private var claimants: [String: String] = [:]

    /// Whether `path` is free; `false` when `claimant` holds it already.
    ///
    /// - Throws: ``ArchiveError/Code/invalidArgument`` when another claimant holds it.
    func isFree(_ path: String, for claimant: String, archive: String) throws -> Bool {
        guard let holder = claimants[path] else { return true }
        guard ExactName.same(holder, claimant) else {
            throw ArchiveError(.invalidArgument, "expected \(holder) and \(claimant) to get members of their own, "
                               + "found both at `\(path)`", archive: archive, member: path)
        }
        return false
    }

    /// Gives `path` to `claimant` (checked free with ``isFree(_:for:archive:)``).
    mutating func claim(_ path: String, for claimant: String) {
        claimants[path] = claimant
    }
}
