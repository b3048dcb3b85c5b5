import FerryArchive
import FerryIO

/// The histories of a replay as one sequence of sources, opened as they are reached: each file,
/// and each history member of each archive, in order.
public final class HistorySources {
    private let paths: FileReadahead
    private var archive: ArchiveReader?
    /// Told what an archive's reading skipped (``HistoryInput/skippedMembersNote(_:)``).
    public var onNote: ((String) -> Void)?

    /// The histories at `paths` (files, `-`; folders already expanded), in order.
    public init(_ paths: [String]) {
        self.paths = FileReadahead(paths)
    }

    /// The next history, or `nil` after the last.
    public func next() throws(FerryError) -> (any ByteSource)? {
        while true {
            if let reader = archive {
                if let member = try FerryError.catching({ try reader.nextHistoryMember() }) { return member.source }
                if let note = HistoryInput.skippedMembersNote(reader) { onNote?(note) }
                archive = nil
            }
            guard let path = paths.next() else { return nil }
            switch try HistoryInput(path: path) {
            case .file(let source): return source
            case .archive(let reader): archive = reader
            }
        }
    }
}
