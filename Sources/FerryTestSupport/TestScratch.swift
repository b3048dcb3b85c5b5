#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Temporary directories for tests, all inside one directory per test process that is removed
/// when the process exits, so that test runs leave nothing behind in the temporary directory
/// (`$TMPDIR`, else `/tmp`). A process that crashes leaves its `ferry-tests-*` directory.
public enum TestScratch {
    /// A new, empty directory.
    public static func directory() -> String {
        var template = Array((root + "/XXXXXX").utf8CString)
        return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    /// The process's directory, made (and its removal at exit arranged) on first use.
    private static let root: String = {
        let base = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array(((base.hasSuffix("/") ? base : base + "/") + "ferry-tests-XXXXXX").utf8CString)
        let path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        removedAtExit = strdup(path)
        atexit {
            guard let path = TestScratch.removedAtExit else { return }
            TestScratch.removeTree(String(cString: path))
        }
        return path
    }()

    /// Removes `path` and, if it is a directory (not a link to one), everything in it first.
    private static func removeTree(_ path: String) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }
        if status.st_mode & S_IFMT == S_IFDIR, let directory = opendir(path) {
            var names: [String] = []
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
                if name != "." && name != ".." { names.append(name) }
            }
            closedir(directory)
            for name in names { removeTree(path + "/" + name) }
            rmdir(path)
        } else {
            unlink(path)
        }
    }

    /// The directory removed at exit, as a C string (the exit handler cannot capture).
    nonisolated(unsafe) private static var removedAtExit: UnsafeMutablePointer<CChar>?
}
