import FerryIO

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
        guard let path = FileSystem.makeTemporaryDirectory(template: root + "/XXXXXX") else {
            fatalError("cannot create a directory in \(root)")
        }
        return path
    }

    /// The process's directory, made (and its removal at exit arranged) on first use.
    private static let root: String = {
        guard let path = FileSystem.makeTemporaryDirectory(template: FileSystem.temporaryDirectory + "/ferry-tests-XXXXXX") else {
            fatalError("cannot create a directory in \(FileSystem.temporaryDirectory)")
        }
        removedAtExit = strdup(path)
        atexit {
            guard let path = TestScratch.removedAtExit else { return }
            FileSystem.removeTree(String(cString: path))
        }
        return path
    }()

    /// The directory removed at exit, as a C string (the exit handler cannot capture).
    nonisolated(unsafe) private static var removedAtExit: UnsafeMutablePointer<CChar>?
}
