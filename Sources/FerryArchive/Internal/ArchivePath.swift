import FerryInternals

/// Member names: building them from zone names, databases and checksums, and checking names read
/// from untrusted archives.
enum ArchivePath {
    /// The manifest's member name, at the root; the first member when Ferry writes it.
    static let manifest = "manifest.json"
    /// The folder of record files.
    static let records = "records"
    /// The folder of asset bytes.
    static let assets = "assets"
    /// The folder of change logs.
    static let changes = "changes"

    /// One path component made safe: bytes outside `A–Z a–z 0–9 . _ - + = @` become `%XX`, and a
    /// leading `.` is escaped so no component is `.`, `..` or hidden.
    static func encodeComponent(_ text: String) -> String {
        var out: [UInt8] = []
        for (index, byte) in text.utf8.enumerated() {
            let safe = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+")
                || byte == UInt8(ascii: "=") || (byte == UInt8(ascii: ".") && index > 0)
            if safe {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "%"), Hex.digit(byte >> 4, uppercase: true), Hex.digit(byte, uppercase: true)]
            }
        }
        if out.isEmpty { return "%00" }
        return String(decoding: out, as: UTF8.self)
    }

    /// Reverses ``encodeComponent(_:)``: `%XX` becomes the byte it stands for (`%00` alone is the
    /// empty string).
    static func decodeComponent(_ text: String) -> String {
        if text == "%00" { return "" }
        var out: [UInt8] = []
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
               let high = Hex.value(of: bytes[index + 1]), let low = Hex.value(of: bytes[index + 2]) {
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The change-log name a `changes/…` member was written for (``changesMember(name:)`` reversed).
    static func changeLogName(ofMember path: String) -> String {
        let pieces = path.split(separator: "/").dropFirst()
        return pieces.map { decodeComponent(String($0)) }.joined(separator: "/")
    }

    /// `records/<database>/<zoneName>.ndjson`, with `@<ownerRecordName>` before the extension when
    /// the zone has an owner (shared databases hold zones of the same name from different owners).
    static func recordsMember(database: String, zoneName: String, owner: String?) -> String {
        var name = encodeComponent(zoneName)
        if let owner { name += "@" + encodeComponent(owner) }
        return "\(records)/\(encodeComponent(database))/\(name).ndjson"
    }

    /// `assets/<fileChecksum>`, the checksum encoded as one component (`/` becomes `%2F`).
    static func assetMember(fileChecksum: String) -> String {
        "\(assets)/\(encodeComponent(fileChecksum))"
    }

    /// `changes/<name>`, each `/`-separated piece of `name` encoded.
    static func changesMember(name: String) -> String {
        let pieces = name.split(separator: "/", omittingEmptySubsequences: true).map { encodeComponent(String($0)) }
        return "\(changes)/" + (pieces.isEmpty ? "%00" : pieces.joined(separator: "/"))
    }

    /// The outcome of checking a member name.
    enum Validation: CustomStringConvertible {
        /// The name's normalized components.
        case safe([String])
        /// Why the name is refused.
        case unsafe(String)

        var description: String {
            switch self {
            case .safe(let components): components.joined(separator: "/")
            case .unsafe(let reason): reason
            }
        }
    }

    /// The normalized components of a member name read from an archive, or a reason it is unsafe.
    ///
    /// `./` components and a trailing `/` are dropped; an absolute name, a `..` component, a NUL
    /// byte, a backslash or an empty name is refused.
    static func validate(_ name: String) -> Validation {
        if name.utf8.contains(0) { return .unsafe("the name contains a NUL byte") }
        if name.hasPrefix("/") { return .unsafe("absolute paths are never extracted") }
        if name.utf8.contains(UInt8(ascii: "\\")) { return .unsafe("backslashes are not allowed in member names") }
        var components: [String] = []
        for piece in name.split(separator: "/", omittingEmptySubsequences: true) {
            if piece == "." { continue }
            if piece == ".." { return .unsafe("`..` components could reach outside the target directory") }
            components.append(String(piece))
        }
        if components.isEmpty { return .unsafe("the name is empty") }
        return .safe(components)
    }
}
