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
/// `send`, `recv`), owned by one client thread; it reconnects when the server closed it.
final class HTTPConnection {
    private let port: UInt16
    private let timeout: Double
    private var descriptor: Int32 = -1
    private var buffer: [UInt8] = []
    /// Where the unread bytes of `buffer` start.
    private var start = 0
    /// How many connections this one has opened (the first and every reconnect).
    private(set) var connects = 0

    init(port: UInt16, timeout: Double) {
        self.port = port
        self.timeout = timeout
        buffer.reserveCapacity(1 << 16)
    }

    deinit { close() }

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
        buffer.removeAll(keepingCapacity: true)
        start = 0
        connects += 1
    }

    func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }

    /// Sends `request` (a whole HTTP/1.1 request) and reads the whole answer. On any error the
    /// connection is closed, so the next exchange reconnects.
    func exchange(_ request: [UInt8]) throws(ExchangeError) -> HTTPAnswer {
        try open()
        do {
            try send(request)
            let answer = try readAnswer()
            return answer
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

    /// Reads more bytes into the buffer; throws `.closed` at end of stream.
    private func fill() throws(ExchangeError) {
        let chunk = 1 << 16
        let old = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: chunk))
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress! + old, chunk, 0) }
            if n > 0 {
                buffer.removeLast(chunk - n)
                return
            }
            buffer.removeLast(chunk)
            if n == 0 { throw .closed }
            if errno == EINTR { buffer.append(contentsOf: repeatElement(0, count: chunk)); continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { throw .timeout }
            if errno == ECONNRESET { throw .closed }
            throw .socket(errnoName())
        }
    }

    /// The index just past the first CRLF at or after `from`, reading more as needed.
    private func line(from: Int) throws(ExchangeError) -> (end: Int, next: Int) {
        var scanned = from
        while true {
            var i = scanned
            while i + 1 < buffer.count {
                if buffer[i] == 13 && buffer[i + 1] == 10 { return (i, i + 2) }
                i += 1
            }
            scanned = max(from, buffer.count - 1)
            if buffer.count - start > 1 << 20 { throw .malformed("a header line over 1 MiB") }
            try fill()
        }
    }

    private func readAnswer() throws(ExchangeError) -> HTTPAnswer {
        // What is left of the last answer (nothing, unless the server sent more than it said).
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
        } else if start > 0 {
            buffer.removeFirst(start)
        }
        start = 0
        // Status line, skipping any 1xx interim answer.
        var status = 0
        var contentLength: Int?
        var chunked = false
        var closes = false
        repeat {
            let statusLine = try line(from: start)
            let text = String(decoding: buffer[start..<statusLine.end], as: UTF8.self)
            let words = text.split(separator: " ", maxSplits: 2)
            guard words.count >= 2, words[0].hasPrefix("HTTP/1."), let code = Int(words[1]) else {
                throw .malformed("status line \(text.prefix(60))")
            }
            status = code
            if words[0] == "HTTP/1.0" { closes = true }
            start = statusLine.next
            contentLength = nil
            chunked = false
            while true {
                let header = try line(from: start)
                defer { start = header.next }
                if header.end == start { break }
                let field = String(decoding: buffer[start..<header.end], as: UTF8.self)
                guard let colon = field.firstIndex(of: ":") else { throw .malformed("header \(field.prefix(60))") }
                let name = field[..<colon].lowercased()
                let value = field[field.index(after: colon)...].trimmingSpaces().lowercased()
                switch name {
                case "content-length":
                    guard let n = Int(value), n >= 0 else { throw .malformed("Content-Length \(value)") }
                    contentLength = n
                case "transfer-encoding": chunked = value.contains("chunked")
                case "connection": if value.contains("close") { closes = true } else if value.contains("keep-alive") { closes = false }
                default: break
                }
            }
        } while (100..<200).contains(status)
        var body: [UInt8] = []
        if chunked {
            while true {
                let sizeLine = try line(from: start)
                let sizeText = String(decoding: buffer[start..<sizeLine.end], as: UTF8.self).prefix { $0 != ";" }
                guard let size = Int(sizeText.trimmingSpaces(), radix: 16), size >= 0 else { throw .malformed("chunk size \(sizeText.prefix(20))") }
                start = sizeLine.next
                if size == 0 {
                    // Trailers, then the empty line.
                    while true {
                        let trailer = try line(from: start)
                        defer { start = trailer.next }
                        if trailer.end == start { break }
                    }
                    break
                }
                while buffer.count - start < size + 2 { try fill() }
                body.append(contentsOf: buffer[start..<start + size])
                start += size + 2
            }
        } else if let contentLength {
            while buffer.count - start < contentLength { try fill() }
            body.append(contentsOf: buffer[start..<start + contentLength])
            start += contentLength
        } else if status != 204 && status != 304 {
            // No length: the body runs to the end of the stream.
            closes = true
            while true {
                do { try fill() } catch .closed { break }
            }
            body.append(contentsOf: buffer[start...])
            start = buffer.count
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
