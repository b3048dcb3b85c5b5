import FerryIO

/// The data of the tar member being read, as a `ByteSource`, hashed with SHA-256 on the way so
/// the reader can compare it with the manifest once the member has been read to its end.
final class MemberSource: ByteSource {
    let name: String
    private let tar: TarReader
    private var hasher = SHA256()
    /// Bytes handed out so far.
    private(set) var bytesRead = 0

    init(tar: TarReader, archive: String, member: String) {
        self.tar = tar
        name = "\(archive): \(member)"
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = try tar.readData(into: buffer)
        hasher.update(UnsafeRawBufferPointer(rebasing: buffer[..<n]))
        bytesRead += n
        return n
    }

    /// Reads what is left (without keeping it) and returns the SHA-256 of the whole member.
    func finish() throws -> String {
        var scratch = [UInt8](repeating: 0, count: 64 << 10)
        while try scratch.withUnsafeMutableBytes({ try read(into: $0) }) > 0 {}
        return hasher.finalizeHex()
    }
}
