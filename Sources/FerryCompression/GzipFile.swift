import FerryIO

/// A gzip file named by its path, read whole by whichever thread asks
/// (``WholeInput/readWhole(limit:)``: each call opens the file anew) or as a stream. `convert`
/// hands a folder's small `.json.gz` responses to its workers this way, so that inflating is
/// spread over every core instead of done by the thread that reads the folder.
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
