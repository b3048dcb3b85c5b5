import FerryIO
/// A gzip file named by its path, read whole by whichever thread asks
/// (``WholeInput/readWhole(limit:)``: each call opens the file anew) or as a stream. `convert`
/// and `replay` hand a folder's small `.json.gz` responses to their workers this way, so that
/// inflating is spread over every core instead of done by the thread that reads the folder.
///
/// On Linux a whole read inflates with libdeflate, about twice as fast as zlib on saved
/// responses; a file it does not decode cleanly (a bad or truncated member, trailing bytes, a
/// header CRC, which libdeflate does not check, the output or ratio limit reached) is read again
/// through ``GzipSource``, whose error says what and where. Past the caller's limit the answer is
/// `nil` at once. The ratio limit applies to the whole file (output at most
/// ``GzipSource/Configuration/maximumRatio`` times its compressed size, or the grace bytes)
/// rather than as the bytes come.
package final class GzipFile: WholeInput, @unchecked Sendable {
    package let path: String
    private let configuration: GzipSource.Configuration
    private var stream: GzipSource?

    /// The file at `path`, which must be a regular file holding gzip (not checked here).
    package init(path: String, configuration: GzipSource.Configuration = GzipSource.Configuration()) {
        self.path = path
        self.configuration = configuration
    }

    /// As ``GzipSource`` names it.
    package var name: String { path + " (gzip)" }

    package var sizeHint: Int? { nil }

    package func mapRemaining(maximumSize: Int) -> MappedInput? { nil }

    package func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if stream == nil { stream = try GzipSource(wrapping: InputFile(path: path), configuration: configuration) }
        return try stream!.read(into: buffer)
    }

    package func readWhole(limit: Int) throws -> (storage: UnsafeMutableRawBufferPointer, count: Int)? {
        #if os(Linux) && canImport(CLibDeflate)
        switch try inflateWhole(limit: limit) {
        case .read(let storage, let count): return (storage, count)
        case .tooLong: return nil
        case .notClean: break
        }
        #endif
        return try readWholeStreaming(limit: limit)
    }

    /// Compressed files larger than this are streamed (a saved response is far smaller).
    static let largestWholeCompressed = 64 << 20

    #if os(Linux) && canImport(CLibDeflate)
    enum WholeRead {
        case read(UnsafeMutableRawBufferPointer, Int)
        /// More than the limit the caller gave.
        case tooLong
        /// Not one or more complete gzip members, or beyond another limit: for ``GzipSource``.
        case notClean
    }

    /// Reads the file and inflates its members one after the other with libdeflate
    /// (``LibDeflateDecompressor``), into a buffer grown while the limits allow.
    func inflateWhole(limit: Int) throws -> WholeRead {
        let file = try InputFile(path: path)
        guard let size = file.size, size >= 18, size <= Self.largestWholeCompressed else { return .notClean }
        let compressed = UnsafeMutableRawBufferPointer.allocate(byteCount: size + 1, alignment: 16)
        defer { compressed.deallocate() }
        var count = 0
        while count <= size {
            let n = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: compressed[count...]))
            if n == 0 { break }
            count += n
        }
        guard count == size else { return .notClean } // changed while read: the stream path decides
        // What the output may reach: the caller's limit, the output limit, the ratio limit.
        var cap = limit
        var capIsCallers = true
        let others = [configuration.maximumOutputBytes,
                      configuration.maximumRatio.map { max(configuration.ratioGraceBytes, $0.multipliedReportingOverflow(by: size).overflow ? .max : $0 * size) }]
        for other in others.compactMap({ $0 }) where other < cap {
            cap = other
            capIsCallers = false
        }
        // The last member's ISIZE is the whole output for one member; for Ferry's own output (a
        // member per block) it is the last block's, so start from four times the compressed size
        // when that is more (a deflate stream rarely expands less), and grow while the caps allow.
        let trailerSize = Int(compressed.loadUnaligned(fromByteOffset: size - 4, as: UInt32.self).littleEndian)
        var capacity = min(max(trailerSize, 4 * size, 4096), cap == .max ? .max : cap + 1)
        var output = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 1)
        guard let decompressor = LibDeflateDecompressor() else {
            output.deallocate()
            return .notClean
        }
        var consumed = 0, produced = 0
        while consumed < size {
            // libdeflate skips a header CRC (FHCRC) without checking it: such members go to the
            // stream, which checks it.
            guard size - consumed < 4 || compressed[consumed + 3] & 0x02 == 0 else {
                output.deallocate()
                return .notClean
            }
            let result = decompressor.decompressMember(UnsafeRawBufferPointer(rebasing: compressed[consumed..<size]),
                                                       into: UnsafeMutableRawBufferPointer(rebasing: output[produced...]))
            switch result {
            case .member(let memberIn, let memberOut):
                consumed += memberIn
                produced += memberOut
                continue
            case .badData:
                output.deallocate()
                return .notClean
            case .insufficientSpace:
                break
            }
            // Room for the member after all: double, up to one byte past the cap (to see it passed).
            let grown = min(capacity.multipliedReportingOverflow(by: 2).overflow ? .max : capacity * 2, cap == .max ? .max : cap + 1)
            guard grown > capacity else {
                output.deallocate()
                return capIsCallers ? .tooLong : .notClean
            }
            let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: grown, alignment: 1)
            if produced > 0 { larger.baseAddress!.copyMemory(from: output.baseAddress!, byteCount: produced) }
            output.deallocate()
            output = larger
            capacity = grown
        }
        if produced > cap {
            output.deallocate()
            return capIsCallers ? .tooLong : .notClean
        }
        return .read(output, produced)
    }
    #endif

    /// ``readWhole(limit:)`` through a ``GzipSource``.
    private func readWholeStreaming(limit: Int) throws -> (storage: UnsafeMutableRawBufferPointer, count: Int)? {
        let source = try GzipSource(wrapping: InputFile(path: path), configuration: configuration)
        var storage = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 18, alignment: 1)
        var count = 0
        do {
            while true {
                if count == storage.count {
                    // Grown at most to one byte past the limit: enough to see that it is passed.
                    let cap = limit == Int.max ? Int.max : limit + 1
                    let grown = UnsafeMutableRawBufferPointer.allocate(byteCount: min(storage.count * 2, cap), alignment: 1)
                    grown.copyMemory(from: UnsafeRawBufferPointer(storage))
                    storage.deallocate()
                    storage = grown
                }
                let n = try source.read(into: UnsafeMutableRawBufferPointer(rebasing: storage[count...]))
                if n == 0 { break }
                count += n
                if count > limit {
                    storage.deallocate()
                    return nil
                }
            }
        } catch {
            storage.deallocate()
            throw error
        }
        return (storage, count)
    }
}
