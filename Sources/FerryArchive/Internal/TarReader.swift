import FerryCompression
import FerryIO
import FerryInternals

/// One member of a tar stream as the reader hands it out.
struct TarEntry {
    /// What the member is; links, devices and FIFOs are refused before an entry is made.
    enum Kind { case file, directory }

    /// The normalized path (no `./`, no trailing `/`), already checked to be safe.
    var path: String
    /// The path's components.
    var components: [String]
    /// File or directory.
    var kind: Kind
    /// Data bytes.
    var size: Int
    /// Offset of the member's first header in the tar stream.
    var headerOffset: Int
    /// Offset of the member's data in the tar stream.
    var dataOffset: Int
}

/// Reads a tar stream member by member, refusing unsafe names and member types, enforcing size
/// limits, and turning every failure into an ``ArchiveError`` with the member and tar offset.
///
/// Understands ustar, pax (`x`; `g` is read and ignored) and GNU (`L`/`K` long names, base-256
/// sizes). Data is streamed: ``readData(into:)`` reads the current member into the caller's buffer.
final class TarReader {
    /// Limits on what the reader accepts.
    struct Limits {
        var maximumMemberBytes: Int?
        var maximumTotalBytes: Int?
        var maximumMembers: Int
        var maximumMetadataBytes: Int
    }

    private let source: any ByteSource
    private let archive: String
    private let limits: Limits
    /// Bytes consumed from the tar stream.
    private(set) var offset = 0
    private var current: TarEntry?
    /// The path of the last member read to its end, so a stream that breaks between members
    /// still names where it broke.
    private var lastPath: String?
    private var remaining = 0
    private var totalBytes = 0
    private var memberCount = 0
    private var isFinished = false
    private var block = [UInt8](repeating: 0, count: TarHeader.blockSize)

    init(source: any ByteSource, archive: String, limits: Limits) {
        self.source = source
        self.archive = archive
        self.limits = limits
    }

    /// The member being read, if any.
    var currentEntry: TarEntry? { current }

    func error(_ code: ArchiveError.Code, _ message: String, member: String? = nil, at offset: Int? = nil,
               underlying: (any Error)? = nil) -> ArchiveError {
        ArchiveError(code, message, archive: archive, member: member ?? current?.path, offset: offset ?? self.offset,
                     underlying: underlying)
    }

    /// Reads from the source, turning its errors into archive errors that name the member.
    private func readSource(into buffer: UnsafeMutableRawBufferPointer, member: String?) throws -> Int {
        do {
            return try source.read(into: buffer)
        } catch let failure as CompressionError {
            throw error(.decompressionFailed, "the compressed stream could not be read", member: member,
                        underlying: failure)
        } catch let failure as ArchiveError {
            throw failure
        } catch {
            throw self.error(.ioFailure, "the archive could not be read", member: member, underlying: error)
        }
    }

    /// Fills `count` bytes of `buffer` exactly; returns how many were read before the end.
    private func readFully(_ buffer: UnsafeMutableRawBufferPointer, member: String?) throws -> Int {
        var filled = 0
        while filled < buffer.count {
            let n = try readSource(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]), member: member)
            if n == 0 { break }
            filled += n
            offset += n
        }
        return filled
    }

    private func readBlock(member: String?, expecting what: String) throws -> Bool {
        let start = offset
        let n = try block.withUnsafeMutableBytes { (raw) -> Int in try readFully(raw, member: member) }
        if n == 0 { return false }
        if n < TarHeader.blockSize {
            throw error(.truncated, "expected \(what) of 512 bytes, found the end of the input after \(n) bytes",
                        member: member, at: start)
        }
        return true
    }

    /// Reads `size` bytes of metadata (pax or GNU long-name data), bounded by the metadata limit.
    private func readMetadata(size: Int, member: String) throws -> [UInt8] {
        guard size <= limits.maximumMetadataBytes else {
            throw error(.limitExceeded, "expected at most \(limits.maximumMetadataBytes) bytes of header metadata "
                        + "(maximumMetadataBytes), found \(size)", member: member)
        }
        var data = [UInt8](repeating: 0, count: size)
        let start = offset
        let n = try data.withUnsafeMutableBytes { (raw) -> Int in try readFully(raw, member: member) }
        guard n == size else {
            throw error(.truncated, "expected \(size) bytes of header metadata, found the end after \(n)", member: member, at: start)
        }
        try skipPadding(size, member: member)
        return data
    }

    private func skipPadding(_ size: Int, member: String?) throws {
        let padding = (TarHeader.blockSize - size % TarHeader.blockSize) % TarHeader.blockSize
        guard padding > 0 else { return }
        let start = offset
        let n = try block.withUnsafeMutableBytes { (raw) -> Int in
            try readFully(UnsafeMutableRawBufferPointer(rebasing: raw[..<padding]), member: member)
        }
        guard n == padding else {
            throw error(.truncated, "expected \(padding) bytes of padding, found the end of the input", member: member, at: start)
        }
    }

    /// Skips what is left of the current member and returns the next file or directory, or `nil`
    /// after the end-of-archive block (the rest of the input is read and discarded so that the
    /// gzip trailer is checked).
    func next() throws -> TarEntry? {
        if isFinished { return nil }
        if let entry = current {
            var scratch = [UInt8](repeating: 0, count: 64 << 10)
            while remaining > 0 {
                let n = try scratch.withUnsafeMutableBytes { (raw) -> Int in try readData(into: raw) }
                if n == 0 { break }
            }
            try skipPadding(entry.size, member: entry.path)
            current = nil
            lastPath = entry.path
        }
        var paxPath: String?
        var paxSize: Int?
        var longName: String?
        while true {
            let headerOffset = offset
            let previous = paxPath ?? longName ?? lastPath
            let after = lastPath.map { " after `\($0)`" } ?? ""
            guard try readBlock(member: previous, expecting: "a tar header" + after) else {
                throw error(.truncated, "expected a tar header or the end-of-archive blocks\(after), found the end of the input",
                            member: previous, at: headerOffset)
            }
            let isZero = block.withUnsafeBytes { TarHeader.isZeroBlock($0) }
            if isZero {
                try drain()
                isFinished = true
                return nil
            }
            let header: TarHeader
            do {
                header = try block.withUnsafeBytes { (raw) throws(TarParseFailure) -> TarHeader in try TarHeader.parse(raw) }
            } catch let failure as TarParseFailure {
                throw self.error(.corruptHeader, failure.message, member: previous, at: headerOffset)
            }
            let name = paxPath ?? longName ?? header.name
            let size = paxSize ?? header.size
            switch header.typeFlag {
            case TarHeader.TypeFlag.paxExtended:
                let data = try readMetadata(size: header.size, member: header.name)
                let records: [String: String]
                do { records = try TarHeader.parsePax(data) } catch {
                    throw self.error(.corruptHeader, error.message, member: header.name, at: headerOffset)
                }
                if let path = records["path"] { paxPath = path }
                if let text = records["size"] {
                    guard let value = Int(text), value >= 0 else {
                        throw error(.corruptHeader, "expected a non-negative pax size, found `\(text)`", member: header.name, at: headerOffset)
                    }
                    paxSize = value
                }
                continue
            case TarHeader.TypeFlag.paxGlobal, TarHeader.TypeFlag.gnuLongLink:
                _ = try readMetadata(size: header.size, member: header.name)
                continue
            case TarHeader.TypeFlag.gnuLongName:
                var data = try readMetadata(size: header.size, member: header.name)
                while data.last == 0 { data.removeLast() }
                longName = String(decoding: data, as: UTF8.self)
                continue
            default:
                break
            }
            if header.typeFlag == TarHeader.TypeFlag.directory,
               name.split(separator: "/").allSatisfy({ $0 == "." }), !name.hasPrefix("/") {
                continue // `./`, the archive's own root, as `tar czf out.tgz .` writes it
            }
            memberCount += 1
            guard memberCount <= limits.maximumMembers else {
                throw error(.limitExceeded, "expected at most \(limits.maximumMembers) members (maximumMembers), found more",
                            member: name, at: headerOffset)
            }
            guard case .safe(let components) = ArchivePath.validate(name) else {
                throw error(.unsafePath, "refusing member `\(name)`: \(ArchivePath.validate(name))", member: name, at: headerOffset)
            }
            let kind: TarEntry.Kind
            switch header.typeFlag {
            case TarHeader.TypeFlag.regular, TarHeader.TypeFlag.regularOld, TarHeader.TypeFlag.contiguous: kind = .file
            case TarHeader.TypeFlag.directory: kind = .directory
            default:
                throw error(.unsupportedMemberType, "expected a regular file or directory, found "
                            + Self.describe(header.typeFlag, link: header.linkName), member: name, at: headerOffset)
            }
            if kind == .file {
                if let limit = limits.maximumMemberBytes, size > limit {
                    throw error(.limitExceeded, "expected members of at most \(limit) bytes (maximumMemberBytes), "
                                + "found \(size)", member: name, at: headerOffset)
                }
                totalBytes += size
                if let limit = limits.maximumTotalBytes, totalBytes > limit {
                    throw error(.limitExceeded, "expected at most \(limit) bytes of members in total (maximumTotalBytes), "
                                + "found \(totalBytes)", member: name, at: headerOffset)
                }
            }
            let entry = TarEntry(path: components.joined(separator: "/"), components: components, kind: kind,
                                 size: size, headerOffset: headerOffset, dataOffset: offset)
            current = entry
            remaining = size
            return entry
        }
    }

    /// Reads data of the current member; `0` at its end.
    func readData(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let entry = current, remaining > 0, buffer.count > 0 else { return 0 }
        let wanted = min(buffer.count, remaining)
        let start = offset
        let n = try readFully(UnsafeMutableRawBufferPointer(rebasing: buffer[..<wanted]), member: entry.path)
        remaining -= n
        if n < wanted {
            throw error(.truncated, "expected \(entry.size) bytes of data, found the end of the input after "
                        + "\(entry.size - remaining)", member: entry.path, at: start + n)
        }
        return n
    }

    /// Reads the rest of the input after the end-of-archive block (zero padding, gzip trailer).
    private func drain() throws {
        var scratch = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n = try scratch.withUnsafeMutableBytes { (raw) -> Int in try readSource(into: raw, member: nil) }
            if n == 0 { return }
            offset += n
        }
    }

    private static func describe(_ flag: UInt8, link: String) -> String {
        switch flag {
        case TarHeader.TypeFlag.symbolicLink: "a symbolic link to `\(link)`"
        case TarHeader.TypeFlag.hardLink: "a hard link to `\(link)`"
        case TarHeader.TypeFlag.characterDevice: "a character device"
        case TarHeader.TypeFlag.blockDevice: "a block device"
        case TarHeader.TypeFlag.fifo: "a FIFO"
        default: "member type `\(flag >= 0x20 && flag < 0x7F ? String(UnicodeScalar(flag)) : Hex.prefixed(flag))`"
        }
    }
}
