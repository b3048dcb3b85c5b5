import FerryIO

/// The files one run reads and writes, each with the argument or option that names it, checked
/// before any output is opened: every run that writes more than standard output (a conversion,
/// a replay) describes its files here and calls ``check()`` first, so that no run overwrites
/// its own input.
///
/// A side output (`--rejects`, `--report`, `--log`, a tokens file beside the state) or a store
/// written in place (`--into`) must name a file of its own: it is renamed into place, or written
/// into, at the end, so it would replace an input or the output without a word. The main output
/// may be one of the inputs (it is renamed into place after every input was read) unless it is
/// written in place. Files are compared by device and inode when they exist, else by their
/// resolved absolute path; an input folder stands for the files in it. Standard output (`-`)
/// takes one output at most.
public struct RunFiles {
    /// A path and what names it on the command line (`OUTPUT`, `--rejects`).
    public struct Named: Sendable, Equatable {
        /// What names it (`OUTPUT`, `--rejects`), for messages.
        public var role: String
        /// The path.
        public var path: String

        /// The file at `path`, named by `role`.
        public init(role: String, path: String) {
            self.role = role
            self.path = path
        }
    }

    /// What the run reads (`-` is standard input, which clashes with no file).
    public var inputs: [Named]
    /// The main output (`-` is standard output).
    public var output: Named?
    /// Whether the main output is written in place (a store), not renamed over its path at the
    /// end: it may then not be an input either.
    public var outputIsWrittenInPlace: Bool
    /// Outputs beside the main one, and stores written in place.
    public var sideOutputs: [Named]

    /// The files of a run.
    public init(inputs: [Named] = [], output: Named? = nil, outputIsWrittenInPlace: Bool = false, sideOutputs: [Named] = []) {
        self.inputs = inputs
        self.output = output
        self.outputIsWrittenInPlace = outputIsWrittenInPlace
        self.sideOutputs = sideOutputs
    }

    /// Usage error naming both options when two outputs are one file, when a side output is an
    /// input, or when more than one output is standard output.
    public func check() throws(FerryError) {
        let outputs = (output.map { [$0] } ?? []) + sideOutputs
        let stdout = outputs.filter { $0.path == "-" }
        if stdout.count > 1 {
            throw .usage("\(stdout[0].role) and \(stdout[1].role) both write to standard output (-): "
                                  + "give all but one of them a file")
        }
        // A device or pipe (`/dev/null`) is written through, never replaced: it clashes with nothing.
        let outputKeys = outputs.map { $0.path == "-" || Syscall.isSpecialFile($0.path) ? nil : FileSystem.key(of: $0.path) }
        for (index, side) in outputs.enumerated() {
            guard let key = outputKeys[index] else { continue }
            for other in outputs.indices where other < index && outputKeys[other] == key {
                throw clash(outputs[other], side, "both would be written")
            }
        }
        for input in inputs where input.path != "-" {
            for file in Self.files(of: input.path) {
                let key = FileSystem.key(of: file)
                for (index, written) in outputs.enumerated() where outputKeys[index] == key {
                    let isMain = index == 0 && output != nil
                    if isMain && !outputIsWrittenInPlace { continue }
                    throw clash(Named(role: input.role, path: file), written, "the input would be replaced")
                }
            }
        }
    }

    private func clash(_ first: Named, _ second: Named, _ consequence: String) -> FerryError {
        let paths = first.path == second.path ? first.path : "\(first.path) and \(second.path)"
        return .usage("\(first.role) and \(second.role) name the same file (\(paths)): \(consequence); "
                               + "give \(second.role) a file of its own")
    }

    /// The path, or the files a folder input is read as (``FileSystem/listFiles(in:)``, as
    /// `convert` and `replay` read it: subfolders included) when it is a folder.
    private static func files(of path: String) -> [String] {
        guard FileSystem.isDirectory(path) else { return [path] }
        return [path] + ((try? FileSystem.listFiles(in: path).files) ?? [])
    }
}
