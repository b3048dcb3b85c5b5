import FerryPredicate
import FerryRecords

/// A cheap first look at record lines, so lines that cannot hold a wanted record are not fully
/// decoded (the `--where` of a pipeline reading JSON).
///
/// Two stages, both optional:
/// - ``mightMatch`` sees the raw bytes of a line. When it says `false` for a plain record line,
///   the line is only checked for well-formed JSON (structure, strings, escapes, UTF-8) and
///   counted as dropped. Lines that could be something else — a response, a server error entry,
///   an array, a line with `\u` escapes that could spell a literal differently — always go on.
/// - ``selection`` and ``decide``: the selected fields (and system keys) are decoded and
///   `decide` judges the partial record; a refused record is dropped without a full decode, and
///   one found to match is not judged again.
///
/// Records that pass are decoded and checked in full, so what is kept is exactly what a full
/// decode would keep; dropped lines get the well-formedness check only.
package struct NDJSONPrefilter: Sendable {
    /// What ``decide`` says of a partly decoded record.
    package enum Verdict: Sendable {
        /// It cannot match: drop it.
        case drop
        /// It matches (the predicate reads only the decoded parts).
        case matched
        /// Undecided (the predicate could not be evaluated): decode it fully and judge it then.
        case keep
    }

    /// `false` when a line's bytes show it cannot hold a wanted record.
    package let mightMatch: (@Sendable (UnsafeRawBufferPointer) -> Bool)?
    /// The fields the acceptance test reads.
    package let selection: FieldSelection?
    /// Judges a partly decoded record (only ``selection`` and the system keys).
    package let decide: (@Sendable (Record) -> Verdict)?

    package init(mightMatch: (@Sendable (UnsafeRawBufferPointer) -> Bool)? = nil, selection: FieldSelection? = nil,
                 decide: (@Sendable (Record) -> Verdict)? = nil) {
        self.mightMatch = mightMatch
        self.selection = selection
        self.decide = decide
    }

    /// The prefilter of a compiled predicate: its literals on raw lines, then a decode of only
    /// the fields it reads. `nil` when the predicate offers neither.
    package init?(for filter: RecordFilter) {
        guard filter.literals != nil || filter.fieldSelection != nil else { return nil }
        var mightMatch: (@Sendable (UnsafeRawBufferPointer) -> Bool)?
        if let literals = filter.literals {
            mightMatch = { line in literals.mightMatch(line) }
        }
        var decide: (@Sendable (Record) -> Verdict)?
        if filter.fieldSelection != nil {
            decide = { record in
                do { return try filter.matches(record) ? .matched : .drop } catch { return .keep }
            }
        }
        self.init(mightMatch: mightMatch, selection: filter.fieldSelection, decide: decide)
    }
}
