#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The largest input a harness looks at: bigger ones are ignored (Scripts/fuzz passes the same
/// number as `-max_len`).
public let maximumInputBytes = 64 << 10

/// The libFuzzer entry point every harness defines as `LLVMFuzzerTestOneInput`.
public typealias FuzzTarget = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>,
                                 _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
                                 _ callback: FuzzTarget) -> CInt

/// Runs libFuzzer's driver over `target` with the process's arguments and exits with its status.
///
/// SwiftPM gives an executable's `main` to its top-level code, so libFuzzer's own `main` is not
/// linked; the top-level code of each harness calls this instead.
public func runFuzzer(_ target: FuzzTarget) -> Never {
    var argc = CommandLine.argc
    var argv = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, target))
}

/// The input as a byte buffer, or `nil` when it is larger than ``maximumInputBytes``.
public func fuzzInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> UnsafeRawBufferPointer? {
    guard size <= maximumInputBytes else { return nil }
    guard let data else { return UnsafeRawBufferPointer(start: nil, count: 0) }
    return UnsafeRawBufferPointer(start: data, count: size)
}

/// Stops the process with `message` when `condition` is false: libFuzzer saves the input as a
/// crash.
public func fuzzCheck(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
                      file: StaticString = #fileID, line: UInt = #line) {
    guard !condition() else { return }
    let text = "FUZZ CHECK FAILED (\(file):\(line)): \(message())\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
    abort()
}

/// A private scratch folder for harnesses that need files, under `$TMPDIR` (or /tmp).
public func fuzzScratchDirectory() -> String {
    let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
    var template = Array("\(base)/ferry-fuzz-XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer { buffer in
        guard let made = mkdtemp(buffer.baseAddress!) else { fatalError("mkdtemp failed under \(base)") }
        return String(cString: made)
    }
}
