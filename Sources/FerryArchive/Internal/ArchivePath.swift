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

    /// The longest path component written, in bytes: the limit of a file name on common file
    /// systems (ext4, XFS, APFS, NTFS in UTF-16 units).
    static let maximumComponentBytes = 255
    /// Marks a component shortened by ``fit(_:within:)``; the escaping never produces it (`~` is
    /// written `%7E`).
    static let shortenedMark = UInt8(ascii: "~")
    /// Hex digits of SHA-256 that stand for what a shortened component left out (128 bits).
    static let shortenedHashDigits = 32

    /// One path component made safe: bytes outside `A–Z a–z 0–9 . _ - + =` become `%XX` (so `@`,
    /// `%`, `/`, `~` and NUL are always escaped), a leading `.` is escaped so no component is `.`,
    /// `..` or hidden, and the empty name is `%` alone, which no escape can produce. One name, one
    /// spelling, and back: ``decodeComponent(_:)``. May be longer than a file name can be; see
    /// ``fit(_:within:)``.
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
        if out.isEmpty { return "%" }
        return String(decoding: out, as: UTF8.self)
    }

    /// Reverses ``encodeComponent(_:)``: `%XX` becomes the byte it stands for, `%` alone is the
    /// empty string, and other bytes stand for themselves.
    static func decodeComponent(_ text: String) -> String {
        if text == "%" { return "" }
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

    /// `spelling` (from ``encodeComponent(_:)``) when it fits in `limit` bytes; otherwise its
    /// longest prefix that fits with room for `~` and the first 32 hex digits of the SHA-256 of
    /// the whole spelling (neither a `%XX` escape nor an escaped character is cut). Distinct spellings stay distinct: a
    /// shortened one holds `~`, which no spelling does, and two shortened ones differ in their
    /// hash. The manifest keeps the exact name.
    static func fit(_ spelling: String, within limit: Int) -> String {
        let bytes = Array(spelling.utf8)
        guard bytes.count > limit else { return spelling }
        var end = limit - 1 - shortenedHashDigits
        if end >= 1 && bytes[end - 1] == UInt8(ascii: "%") {
            end -= 1
        } else if end >= 2 && bytes[end - 2] == UInt8(ascii: "%") {
            end -= 2
        }
        // Nor a character: a UTF-8 sequence written as escapes goes whole or not at all, so the
        // prefix reads as the start of the name.
        var cursor = end
        var continuations = 0
        while cursor >= 3, bytes[cursor - 3] == UInt8(ascii: "%"),
              let high = Hex.value(of: bytes[cursor - 2]), let low = Hex.value(of: bytes[cursor - 1]) {
            let byte = high << 4 | low
            cursor -= 3
            if byte & 0xC0 == 0x80 {
                continuations += 1
                continue
            }
            let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
            if continuations + 1 < length { end = cursor }
            break
        }
        let hash = SHA256.hexDigest(of: bytes).prefix(shortenedHashDigits)
        return String(decoding: bytes[..<end], as: UTF8.self) + "~" + hash
    }

    /// Whether `component` was shortened by ``fit(_:within:)``, so it does not decode to the name.
    static func isShortened(_ component: some StringProtocol) -> Bool {
        component.utf8.contains(shortenedMark)
    }

    /// `name` as one component of at most ``maximumComponentBytes`` bytes.
    static func component(_ name: String) -> String {
        fit(encodeComponent(name), within: maximumComponentBytes)
    }

    /// The change-log name a `changes/…` member was written for (``changesMember(name:)`` reversed).
    static func changeLogName(ofMember path: String) -> String {
        let pieces = path.split(separator: "/").dropFirst()
        return pieces.map { decodeComponent(String($0)) }.joined(separator: "/")
    }

    /// The extension of records members.
    static let recordsExtension = ".ndjson"

    /// `records/<database>/<zoneName>.ndjson`, with `@<ownerRecordName>` before the extension when
    /// the zone has an owner (shared databases hold zones of the same name from different owners).
    /// Each name is escaped (``encodeComponent(_:)``); a database, or a `<zoneName>@<owner>`, too
    /// long for a file name is shortened (``fit(_:within:)``), so every component fits in
    /// ``maximumComponentBytes`` and distinct zones get distinct paths.
    static func recordsMember(database: String, zoneName: String, owner: String?) -> String {
        var name = encodeComponent(zoneName)
        if let owner { name += "@" + encodeComponent(owner) }
        name = fit(name, within: maximumComponentBytes - recordsExtension.utf8.count)
        return "\(records)/\(component(database))/\(name)\(recordsExtension)"
    }

    /// `assets/<fileChecksum>`, the checksum encoded as one component (`/` becomes `%2F`;
    /// shortened as a zone name is when too long, the manifest keeping the checksum).
    static func assetMember(fileChecksum: String) -> String {
        "\(assets)/\(component(fileChecksum))"
    }

    /// `changes/<name>`, each `/`-separated piece of `name` encoded (and shortened when too long).
    static func changesMember(name: String) -> String {
        let pieces = name.split(separator: "/", omittingEmptySubsequences: true).map { component(String($0)) }
        return "\(changes)/" + (pieces.isEmpty ? encodeComponent("") : pieces.joined(separator: "/"))
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
