import FerryInternals
import FerryRecords

/// What a run that skips bad input (`--on-error skip`) says of each input skipped: the error,
/// at most ten per input file, then once that more were not shown.
public final class SkippedInputNotes {
    private var shown: [String: Int] = [:]

    /// Notes starting with none shown.
    public init() {}

    /// The sentence to show for the skipped input `error` (`skipped: ERROR`, or that more were
    /// not shown), or `nil` once ten of its file were shown and that was said.
    public func note(for error: any Error) -> String? {
        let source = (error as? RecordFormatError)?.source ?? ""
        let count = shown[source, default: 0] + 1
        shown[source] = count
        if count <= 10 { return "skipped: \(error)" }
        return count == 11 ? "more skipped inputs in \(source) not shown" : nil
    }
}
