#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The three kinds of request `ferry-load` sends.
enum RequestKind: Int, CaseIterable, Sendable {
    case lookup, query, modify

    var name: String {
        switch self {
        case .lookup: "lookup"
        case .query: "query"
        case .modify: "modify"
        }
    }

    /// The CKWS operation path after `/database/1/{container}/{environment}/{database}/`.
    var operation: String {
        switch self {
        case .lookup: "records/lookup"
        case .query: "records/query"
        case .modify: "records/modify"
        }
    }
}

/// What a load run does, from the command line. Loopback only, bounded in time.
struct LoadConfiguration: Sendable {
    static let usage = """
    ferry-load: concurrent HTTP/1.1 keep-alive clients against a CloudKit Web Services server on
    loopback (`ferry serve`), mixing records/lookup, records/query and records/modify (creates).

    usage: ferry-load [options]
      --url URL            the server, http://127.0.0.1:PORT (loopback only; default http://127.0.0.1:8080)
      --container ID       default iCloud.dev.ferry.load
      --environment ENV    development (default) or production
      --database DB        public, private (default) or shared
      --clients N          concurrent clients, each with its own connection (default 64, at most 1024)
      --duration S         seconds to send for (default 60, at most 300)
      --mix SPEC           lookup=70,query=20,modify=10 (default), or one kind: lookup, query, modify
      --seed N             random seed (default 1)
      --names FILE         record names to look up, one a line (needed when the mix has lookups)
      --lookup-batch N     records per lookup request (default 1, at most 200)
      --zone NAME          zone of lookups, queries and creates (default _defaultZone)
      --owner NAME         the zone's ownerRecordName (default: none sent)
      --type TYPE          record type queried (default Message)
      --query-field F      INT64 field the query filters on, EQUALS a random 0...100 (default count)
      --query-filter JSON  the query's filterBy array verbatim instead
      --query-limit N      resultsLimit (default 20)
      --create-type TYPE   record type created (default LoadTest)
      --run TAG            created names are load-TAG-CLIENT-N (default load-CLIENT-N)
      --acknowledged FILE  write the names of acknowledged creates (200, no per-record error), one a line
      --unsettled FILE     write the names of creates sent but not acknowledged (error or no answer)
      --api-token T        send ckAPIToken=T (and --web-auth-token T: ckWebAuthToken=T) with every request,
                           for a server started with --api-token (never printed)
      --timeout S          seconds to wait for a read; the run ends at most about this long after
                           --duration (default 10)
      --json               print the results as JSON instead of a table
      --json-file FILE     also write the results as JSON to FILE
    Exit status: 0 when the run completed (errors are reported, not fatal), 2 on bad options.
    """

    var host = "127.0.0.1"
    var port: UInt16 = 8080
    var pathPrefix = ""
    var container = "iCloud.dev.ferry.load"
    var environment = "development"
    var database = "private"
    var clients = 64
    var duration = 60.0
    var mix: [(kind: RequestKind, weight: Int)] = [(.lookup, 70), (.query, 20), (.modify, 10)]
    var seed: UInt64 = 1
    var namesFile: String?
    var lookupBatch = 1
    var zone = "_defaultZone"
    var owner: String?
    var recordType = "Message"
    var queryField = "count"
    var queryFilter: String?
    var queryLimit = 20
    var createType = "LoadTest"
    var runTag: String?
    var acknowledgedFile: String?
    var unsettledFile: String?
    var timeout = 10.0
    var json = false
    var apiToken: String?
    var webAuthToken: String?
    var jsonFile: String?

    static let maximumDuration = 300.0
    static let maximumClients = 1024

    /// The request path of `kind`, with the tokens as query parameters when given.
    func path(_ kind: RequestKind) -> String {
        let tokens = [("ckAPIToken", apiToken), ("ckWebAuthToken", webAuthToken)].compactMap { name, value in
            value.map { "\(name)=\(percentEncoded($0))" }
        }
        return "\(pathPrefix)/database/1/\(container)/\(environment)/\(database)/\(kind.operation)"
            + (tokens.isEmpty ? "" : "?" + tokens.joined(separator: "&"))
    }

    /// The name of the `n`th create of `client`.
    func createdName(client: Int, n: Int) -> String {
        if let runTag { return "load-\(runTag)-\(client)-\(n)" }
        return "load-\(client)-\(n)"
    }

    init(arguments: [String]) throws(UsageError) {
        var rest = arguments[...]
        func value(_ option: String) throws(UsageError) -> String {
            guard let next = rest.popFirst() else { throw UsageError("\(option) needs a value") }
            return next
        }
        func number(_ option: String, _ range: ClosedRange<Int>) throws(UsageError) -> Int {
            let text = try value(option)
            guard let n = Int(text), range.contains(n) else {
                throw UsageError("\(option) expects a whole number in \(range.lowerBound)...\(range.upperBound), found \(text)")
            }
            return n
        }
        func seconds(_ option: String, _ limit: Double) throws(UsageError) -> Double {
            let text = try value(option)
            guard let s = Double(text), s > 0, s <= limit else {
                throw UsageError("\(option) expects seconds above 0 and at most \(Int(limit)), found \(text)")
            }
            return s
        }
        while let option = rest.popFirst() {
            switch option {
            case "--url": try parseURL(try value(option))
            case "--container": container = try value(option)
            case "--environment":
                environment = try value(option)
                guard ["development", "production"].contains(environment) else {
                    throw UsageError("--environment expects development or production, found \(environment)")
                }
            case "--database":
                database = try value(option)
                guard ["public", "private", "shared"].contains(database) else {
                    throw UsageError("--database expects public, private or shared, found \(database)")
                }
            case "--clients": clients = try number(option, 1...Self.maximumClients)
            case "--duration": duration = try seconds(option, Self.maximumDuration)
            case "--mix": mix = try Self.parseMix(try value(option))
            case "--seed":
                let text = try value(option)
                guard let s = UInt64(text) else { throw UsageError("--seed expects a whole number, found \(text)") }
                seed = s
            case "--names": namesFile = try value(option)
            case "--lookup-batch": lookupBatch = try number(option, 1...200)
            case "--zone": zone = try value(option)
            case "--owner": owner = try value(option)
            case "--type": recordType = try value(option)
            case "--query-field": queryField = try value(option)
            case "--query-filter": queryFilter = try value(option)
            case "--query-limit": queryLimit = try number(option, 1...200)
            case "--create-type": createType = try value(option)
            case "--run":
                let tag = try value(option)
                guard !tag.isEmpty, tag.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x5F }) else {
                    throw UsageError("--run expects lower-case letters, digits and _, found \(tag)")
                }
                runTag = tag
            case "--acknowledged": acknowledgedFile = try value(option)
            case "--unsettled": unsettledFile = try value(option)
            case "--timeout": timeout = try seconds(option, 120)
            case "--json": json = true
            case "--api-token": apiToken = try value(option)
            case "--web-auth-token": webAuthToken = try value(option)
            case "--json-file": jsonFile = try value(option)
            case "-h", "--help": throw UsageError("")
            default: throw UsageError("unknown option \(option)")
            }
        }
        if mix.contains(where: { $0.kind == .lookup }) && namesFile == nil {
            throw UsageError("a mix with lookups needs --names FILE (record names that exist, one a line)")
        }
    }

    /// `http://127.0.0.1:PORT[/prefix]`; any other host is refused: this tool loads loopback only.
    private mutating func parseURL(_ url: String) throws(UsageError) {
        guard url.hasPrefix("http://") else { throw UsageError("--url expects http://127.0.0.1:PORT, found \(url)") }
        let rest = url.dropFirst("http://".count)
        let authority = rest.prefix { $0 != "/" }
        var prefix = String(rest.dropFirst(authority.count))
        while prefix.hasSuffix("/") { prefix.removeLast() }
        let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
        let hostName = String(parts[0])
        guard hostName == "127.0.0.1" || hostName == "localhost" else {
            throw UsageError("--url must name the loopback host 127.0.0.1 (or localhost), found \(hostName): ferry-load never loads another machine")
        }
        if parts.count == 2 {
            guard let p = UInt16(parts[1]), p > 0 else { throw UsageError("--url has a bad port: \(parts[1])") }
            port = p
        } else if parts.count > 2 {
            throw UsageError("--url has a bad authority: \(authority)")
        } else {
            port = 80
        }
        host = "127.0.0.1"
        pathPrefix = prefix
    }

    /// `lookup=70,query=20,modify=10`, or one kind alone.
    static func parseMix(_ text: String) throws(UsageError) -> [(kind: RequestKind, weight: Int)] {
        var mix: [(kind: RequestKind, weight: Int)] = []
        for item in text.split(separator: ",") {
            let pair = item.split(separator: "=", maxSplits: 1)
            guard let kind = RequestKind.allCases.first(where: { $0.name == pair[0] }) else {
                throw UsageError("--mix: unknown kind \(pair[0]) (lookup, query, modify)")
            }
            var weight = 1
            if pair.count == 2 {
                guard let w = Int(pair[1]), w >= 0, w <= 1_000_000 else { throw UsageError("--mix: bad weight in \(item)") }
                weight = w
            }
            guard !mix.contains(where: { $0.kind == kind }) else { throw UsageError("--mix names \(kind.name) twice") }
            if weight > 0 { mix.append((kind, weight)) }
        }
        guard !mix.isEmpty else { throw UsageError("--mix names no kind with a weight above 0: \(text)") }
        return mix
    }
}

/// `text` with every byte but unreserved ones (RFC 3986) percent-encoded.
func percentEncoded(_ text: String) -> String {
    var out = ""
    for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            out.unicodeScalars.append(Unicode.Scalar(byte))
        default:
            let hex = String(byte, radix: 16, uppercase: true)
            out += "%" + (hex.count == 1 ? "0" : "") + hex
        }
    }
    return out
}

/// A bad command line: the message says what was expected and what was found.
struct UsageError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}
