#if CloudKit
import FerryCloudKit
import Foundation
import HTTPTypes
import Hummingbird

/// Hummingbird's side: every HTTP request, whatever its path, becomes a ``CloudKitRequest`` for
/// the gate, and its ``CloudKitResponse`` is written back. Bodies over the limit are answered
/// 413 here; a line per request goes to stderr unless quiet. Nothing here throws to Hummingbird,
/// so every answer is a CKWS body.
struct HTTPAdaptor: HTTPResponder {
    typealias Context = BasicRequestContext

    let gate: RequestGate
    let maxBodyBytes: Int
    let log: RequestLog?

    func respond(to request: Request, context: BasicRequestContext) async throws -> Response {
        let started = ContinuousClock.now
        let path = request.uri.path
        let response: CloudKitResponse
        do {
            let body = try await collectBody(request)
            let exchange = CloudKitRequest(
                method: request.method.rawValue, path: path, query: Self.queryItems(request.uri.query),
                headers: request.headers.map { (name: $0.name.rawName, value: $0.value) }, body: body)
            response = await gate.respond(to: exchange)
        } catch let error as BodyTooLarge {
            response = CloudKitResponse(error: CloudKitError(.quotaExceeded, "expected a request body of at most \(maxBodyBytes) bytes, found \(error.found)"))
        } catch {
            response = CloudKitResponse(error: CloudKitError(.badRequest, "could not read the request body: \(error)"))
        }
        log?.write(method: request.method.rawValue, path: path, status: response.status, since: started)
        return Self.httpResponse(response)
    }

    private struct BodyTooLarge: Error {
        var found: String
    }

    /// The whole body, refused as soon as it is known to be over the limit (by Content-Length or
    /// while reading).
    private func collectBody(_ request: Request) async throws -> [UInt8] {
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > maxBodyBytes {
            throw BodyTooLarge(found: "\(length) (Content-Length)")
        }
        var bytes: [UInt8] = []
        for try await buffer in request.body {
            guard bytes.count + buffer.readableBytes <= maxBodyBytes else {
                throw BodyTooLarge(found: "more")
            }
            bytes.append(contentsOf: buffer.readableBytesView)
        }
        return bytes
    }

    /// The query's `name=value` pairs in order, percent-decoded (`+` stays `+`: CKWS tokens and
    /// markers are base64 or hex).
    static func queryItems(_ query: String?) -> [(name: String, value: String)] {
        guard let query, !query.isEmpty else { return [] }
        return query.split(separator: "&", omittingEmptySubsequences: true).map { item in
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0]), value = parts.count > 1 ? String(parts[1]) : ""
            return (name.removingPercentEncoding ?? name, value.removingPercentEncoding ?? value)
        }
    }

    static func httpResponse(_ response: CloudKitResponse) -> Response {
        var fields = HTTPFields()
        for header in response.headers {
            // A header name HTTP cannot carry is dropped rather than failing the response.
            if let name = HTTPField.Name(header.name) {
                fields.append(HTTPField(name: name, value: header.value))
            }
        }
        return Response(
            status: HTTPResponse.Status(code: response.status), headers: fields,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: response.body)))
    }
}

/// The line per request on stderr: `ferry serve: POST /database/1/…/records/query 200 1.2 ms`.
/// Only the path is written: query parameters carry tokens.
struct RequestLog: Sendable {
    func write(method: String, path: String, status: Int, since started: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - started
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        let printable = String(path.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : Character($0) })
        let line = "ferry serve: \(method) \(printable.prefix(512)) \(status) \(String(format: "%.1f", milliseconds)) ms\n"
        FileHandle.standardError.write(Data(line.utf8))
    }
}
#endif
