#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why an exchange got no answer.
enum ExchangeError: Error {
    /// `connect(2)` failed (the errno's name).
    case connect(String)
    /// The server closed the connection before the whole answer (or before any answer).
    case closed
    /// No answer within the timeout.
    case timeout
    /// Another socket error (the errno's name).
    case socket(String)
    /// The answer is not HTTP/1.1 as expected.
    case malformed(String)

    /// A short label for the error table.
    var label: String {
        switch self {
        case .connect(let name): "connect \(name)"
        case .closed: "connection closed mid-exchange"
        case .timeout: "no answer within the timeout"
        case .socket(let name): "socket \(name)"
        case .malformed(let what): "malformed answer: \(what)"
        }
    }
}

/// One HTTP/1.1 answer: the status and the whole body (Content-Length or chunked, de-chunked).
struct HTTPAnswer {
    var status: Int
    var body: [UInt8]
}

/// One keep-alive HTTP/1.1 connection to 127.0.0.1 over a POSIX TCP socket (`socket`, `connect`,
/// `send`, `recv`), owned by one client thread; it reconnects when the server closed it. Answers
/// are read into one buffer the connection owns (`malloc`ed, grown by doubling, freed in `deinit`).
final class HTTPConnection {
    private let port: UInt16
    private let timeout: Double
    private var descriptor: Int32 = -1
    private var buffer: UnsafeMutablePointer<UInt8>
    private var capacity = 1 << 16
    /// The bytes read so far end here.
    private var end = 0
    /// Where the unread bytes start.
    private var start = 0
    /// How many connections this one has opened (the first and every reconnect).
    private(set) var connects = 0
    /// The exchange in progress gives up (`.timeout`) when a read is due after this monotonic time.
    private var giveUpAt = Double.infinity

    init(port: UInt16, timeout: Double) {
        self.port = port
        self.timeout = timeout
        buffer = .allocate(capacity: capacity)
    }

    deinit {
        close()
        buffer.deallocate()
    }

    var isOpen: Bool { descriptor >= 0 }

    /// Opens the connection if it is not open.
    func open() throws(ExchangeError) {
        guard descriptor < 0 else { return }
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw .socket(errnoName()) }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var limit = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian  // 127.0.0.1, the only host
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else {
            let name = errnoName()
            Glibc.close(fd)
            throw .connect(name)
        }
        descriptor = fd
        start = 0
        end = 0
        connects += 1
    }

    func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }

    /// Sends `request` (a whole HTTP/1.1 request) and reads the whole answer. Each `recv` waits
    /// for the timeout at most, and no `recv` starts after `giveUpAt`: a server that trickles its
    /// answer cannot hold the run past it. On any error the connection is closed, so the next
    /// exchange reconnects.
    func exchange(_ request: [UInt8], giveUpAt: Double) throws(ExchangeError) -> HTTPAnswer {
        self.giveUpAt = giveUpAt
        try open()
        do {
            try send(request)
            return try readAnswer()
        } catch {
            close()
            throw error
        }
    }

    private func send(_ bytes: [UInt8]) throws(ExchangeError) {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { throw .timeout }
                if errno == EPIPE || errno == ECONNRESET { throw .closed }
                throw .socket(errnoName())
            }
            sent += n
        }
    }

    /// Reads more bytes into the buffer (growing it when full); throws `.closed` at end of stream.
    private func fill() throws(ExchangeError) {
        if end == capacity {
            guard capacity < 1 << 30 else { throw .malformed("an answer over 1 GiB") }
            let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity * 2)
            grown.update(from: buffer, count: end)
            buffer.deallocate()
            buffer = grown
            capacity *= 2
        }
        if now() > giveUpAt { throw .timeout }
        while true {
            let n = recv(descriptor, buffer + end, capacity - end, 0)
            if n > 0 {
                end += n
                return
            }
            if n == 0 { throw .closed }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { throw .timeout }
            if errno == ECONNRESET { throw .closed }
            throw .socket(errnoName())
        }
    }

    /// The end of the line starting at `start` (its CR) and where the next one starts, reading
    /// more as needed.
    private func line() throws(ExchangeError) -> (end: Int, next: Int) {
        var i = start
        while true {
            while i + 1 < end {
                if buffer[i] == 13 && buffer[i + 1] == 10 { return (i, i + 2) }
                i += 1
            }
            if end - start > 1 << 20 { throw .malformed("a header line over 1 MiB") }
            try fill()
        }
    }

    /// Whether the bytes `from..<to` start with `prefix` (ASCII, compared case-insensitively).
    private func hasPrefix(_ prefix: StaticString, _ from: Int, _ to: Int) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard to - from >= count else { return false }
        let p = prefix.utf8Start
        for k in 0..<count where buffer[from + k] | 0x20 != p[k] | 0x20 { return false }
        return true
    }

    /// The text of `from..<to` after its leading spaces.
    private func text(_ from: Int, _ to: Int) -> String {
        var from = from
        while from < to && (buffer[from] == 32 || buffer[from] == 9) { from += 1 }
        var to = to
        while to > from && (buffer[to - 1] == 32 || buffer[to - 1] == 9) { to -= 1 }
        return String(decoding: UnsafeBufferPointer(start: buffer + from, count: to - from), as: UTF8.self)
    }

    private func readAnswer() throws(ExchangeError) -> HTTPAnswer {
        // What is left of the last answer (nothing, unless the server sent more than it said).
        if start < end && start > 0 { buffer.update(from: buffer + start, count: end - start) }
        end -= start
        start = 0
        var status = 0
        var contentLength: Int?
        var chunked = false
        var closes = false
        repeat {  // the status line and headers, skipping any 1xx interim answer
            let statusLine = try line()
            guard hasPrefix("HTTP/1.", start, statusLine.end), statusLine.end - start >= 12,
                  let code = Int(text(start + 9, start + 12)) else {
                throw .malformed("status line \(text(start, min(statusLine.end, start + 60)))")
            }
            status = code
            closes = hasPrefix("HTTP/1.0", start, statusLine.end)
            start = statusLine.next
            contentLength = nil
            chunked = false
            while true {
                let header = try line()
                defer { start = header.next }
                if header.end == start { break }
                if hasPrefix("content-length:", start, header.end) {
                    let value = text(start + 15, header.end)
                    guard let n = Int(value), n >= 0 else { throw .malformed("Content-Length \(value)") }
                    contentLength = n
                } else if hasPrefix("transfer-encoding:", start, header.end) {
                    chunked = text(start + 18, header.end).lowercased().contains("chunked")
                } else if hasPrefix("connection:", start, header.end) {
                    let value = text(start + 11, header.end).lowercased()
                    if value.contains("close") { closes = true } else if value.contains("keep-alive") { closes = false }
                }
            }
        } while (100..<200).contains(status)
        var body: [UInt8] = []
        if chunked {
            while true {
                let sizeLine = try line()
                let sizeText = text(start, sizeLine.end).prefix { $0 != ";" && $0 != " " }
                guard let size = Int(sizeText, radix: 16), size >= 0 else { throw .malformed("chunk size \(sizeText.prefix(20))") }
                start = sizeLine.next
                if size == 0 {
                    while true {  // trailers, then the empty line
                        let trailer = try line()
                        defer { start = trailer.next }
                        if trailer.end == start { break }
                    }
                    break
                }
                while end - start < size + 2 { try fill() }
                body.append(contentsOf: UnsafeBufferPointer(start: buffer + start, count: size))
                start += size + 2
            }
        } else if let contentLength {
            while end - start < contentLength { try fill() }
            body = Array(UnsafeBufferPointer(start: buffer + start, count: contentLength))
            start += contentLength
        } else if status != 204 && status != 304 {
            // No length: the body runs to the end of the stream.
            closes = true
            while true {
                do { try fill() } catch .closed { break }
            }
            body = Array(UnsafeBufferPointer(start: buffer + start, count: end - start))
            start = end
        }
        if closes { close() }
        return HTTPAnswer(status: status, body: body)
    }
}

extension StringProtocol {
    func trimmingSpaces() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}

/// The symbolic name of the current `errno` (ECONNREFUSED, …), else its number.
func errnoName() -> String {
    let code = errno
    let names: [Int32: String] = [
        ECONNREFUSED: "ECONNREFUSED", ECONNRESET: "ECONNRESET", EPIPE: "EPIPE", ETIMEDOUT: "ETIMEDOUT",
        EADDRNOTAVAIL: "EADDRNOTAVAIL", EMFILE: "EMFILE", ENFILE: "ENFILE", EAGAIN: "EAGAIN", EINTR: "EINTR",
    ]
    return names[code] ?? "errno \(code)"
}
