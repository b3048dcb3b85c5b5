import FerryInternals
import FerryIO

/// The data of the tar member being read, as a `ByteSource`, hashed with SHA-256 on the way so
/// the reader can compare it with the manifest once the member has been read to its end.
///
/// With a `copy` (extraction), every byte handed out is also written to that staged file, which
/// ``finish()`` closes: whoever reads the member — the records reader, a member handler, the
/// checksum — the staged file ends up holding exactly the bytes that were checked.
final class MemberSource: ByteSource {
    let name: String
    private let tar: TarReader
    private let archive: String
    private let member: String
    private let copy: StagedFile?
    private var hasher = SHA256()
    /// Bytes handed out so far.
    private(set) var bytesRead = 0

    init(tar: TarReader, archive: String, member: String, copy: StagedFile? = nil) {
        self.tar = tar
        self.archive = archive
        self.member = member
        self.copy = copy
        name = "\(archive): \(member)"
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = try tar.readData(into: buffer)
        let bytes = UnsafeRawBufferPointer(rebasing: buffer[..<n])
        hasher.update(bytes)
        if let copy {
            do { try copy.write(bytes) } catch {
                throw ArchiveError(.ioFailure, "cannot write `\(copy.path)`", archive: archive, member: member,
                                   underlying: error)
            }
        }
        bytesRead += n
        return n
    }

    /// Reads what is left (without keeping it), closes the staged copy, and returns the SHA-256
    /// of the whole member.
    func finish() throws -> String {
        var scratch = [UInt8](repeating: 0, count: 64 << 10)
        while try scratch.withUnsafeMutableBytes({ try read(into: $0) }) > 0 {}
        if let copy {
            do { try copy.close() } catch {
                throw ArchiveError(.ioFailure, "cannot write `\(copy.path)`", archive: archive, member: member,
                                   underlying: error)
            }
        }
        return hasher.finalizeHex()
    }
}
