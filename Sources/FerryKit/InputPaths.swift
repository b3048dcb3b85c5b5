import FerryIO

/// The inputs of a run as the files read: folders expanded into the files under them.
public enum InputPaths {
    /// `inputs` with each folder replaced by the files under it (`FileSystem.listFiles`:
    /// subfolders depth-first, by name); `-` and files stay as they are.
    ///
    /// `onNote` is told, per folder, how many entries it passed over (hidden entries, SQLite
    /// sidecar files, links to folders of the tree, FIFOs and devices), as a sentence.
    ///
    /// - Throws: ``FerryError`` when a folder cannot be listed.
    public static func expand(_ inputs: [String], onNote: ((String) -> Void)? = nil) throws(FerryError) -> [String] {
        var result: [String] = []
        for input in inputs {
            guard input != "-" && FileSystem.isDirectory(input) else {
                result.append(input)
                continue
            }
            let listing = try FerryError.catching { try FileSystem.listFiles(in: input) }
            result.append(contentsOf: listing.files)
            if let onNote, !listing.skipped.isEmpty {
                let count = listing.skipped.count
                let shown = listing.skipped.prefix(3).joined(separator: ", ") + (count > 3 ? ", …" : "")
                onNote("\(input): skipped \(count) \(count == 1 ? "entry" : "entries") (hidden, SQLite sidecar files, "
                       + "links to folders of the tree, neither file nor folder): \(shown)")
            }
        }
        return result
    }

    /// Whether every path can be read again from its start: files, not standard input, a pipe or
    /// a FIFO (`<(cat h)`).
    public static func canBeReadAgain(_ paths: [String]) -> Bool {
        paths.allSatisfy { $0 != "-" && FileSystem.isRegularFile($0) }
    }
}
