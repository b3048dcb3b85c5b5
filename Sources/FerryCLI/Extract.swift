import ArgumentParser
import FerryKit

/// `ferry extract ARCHIVE DIRECTORY`: writes an archive's members out, safely.
struct Extract: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write an archive's members (manifest, records, change logs, assets) into a folder, safely.",
        discussion: """
        Nothing is ever written outside DIRECTORY: absolute paths, .. components, links, devices \
        and FIFOs are refused, an existing symlink on the way to a member stops extraction, and \
        decompression bombs are stopped by the ratio and size limits. The archive is checked as \
        ferry verify checks it (every member's size and SHA-256, every records member decoded and \
        its counts per record type, the schema, the total record count) while each member is \
        written to a hidden staging folder inside DIRECTORY; the members are moved into place only \
        once all of it checked out. On any problem, extraction stops with exit 1 and no member \
        appears (nor DIRECTORY, when the extraction made it).

        An archive without a manifest (a plain tar czf of a folder) is extracted as tar would, \
        with the same safety checks and its gzip and tar layers checked; nothing vouches for its \
        files, so a record file is written whatever it holds (check its records with ferry verify \
        --allow-missing-manifest), and the summary says so.

        Examples:
          ferry extract backup.tar.gz restore/
          ferry extract backup.tar.gz restore/ --max-ratio 200 --max-bytes 10G
          ferry extract backup.tar.gz restore/ --json | jq .members
        """
    )

    @Argument(help: ArgumentHelp("The archive (- is stdin).", valueName: "ARCHIVE"))
    var archive: String

    @Argument(help: ArgumentHelp("The folder to extract into (created if missing; its parent must exist).", valueName: "DIRECTORY"))
    var directory: String

    @OptionGroup var limits: ArchiveLimitOptions

    @Flag(help: "Print nothing on success, not even with --json.")
    var quiet = false

    @Flag(help: "Print a JSON summary on stdout: archive, directory, members, manifest, records.")
    var json = false

    func validate() throws {

        guard Ferry.validatesOptions else { return }
        if directory == "-" { throw ValidationError("DIRECTORY is a folder to write the members into, not standard output (-)") }
        try checkInputsExist([archive])
        _ = try limits.configuration()
    }

    func run() throws {
        let summary = try Extraction(archive: archive, directory: directory, configuration: try limits.configuration()).run()
        if quiet {
            // Nothing on success, not even with --json.
        } else if json {
            print(summary.json)
        } else {
            note(summary.line)
        }
    }
}

/// Limits for reading untrusted archives.
struct ArchiveLimitOptions: ParsableArguments {
    @Option(name: .customLong("max-ratio"), parsing: .unconditional, help: "Largest compression ratio accepted (decompression bombs); 0 turns the check off.")
    var maxRatio: Int?

    @Option(name: .customLong("max-bytes"), help: ArgumentHelp("Most decompressed bytes accepted (e.g. 500M, 64G); 0 turns the check off.", valueName: "SIZE"))
    var maxBytes: String?

    func configuration() throws -> ArchiveReader.Configuration {
        var configuration = ArchiveReader.Configuration()
        if let maxRatio {
            try checkNumber(maxRatio, of: "--max-ratio", in: 0...Int.max)
            configuration.gzip.maximumRatio = maxRatio == 0 ? nil : maxRatio
        }
        if let maxBytes {
            guard let bytes = parseSize(maxBytes) else {
                throw ValidationError("--max-bytes expects a size such as 500M or 64G, found '\(maxBytes)'")
            }
            configuration.gzip.maximumOutputBytes = bytes == 0 ? nil : bytes
            configuration.maximumTotalBytes = bytes == 0 ? nil : bytes
        }
        return configuration
    }
}

/// `123`, `500K`, `20M`, `64G`, `1T` (powers of 1024) → bytes.
func parseSize(_ text: String) -> Int? {
    var digits = Substring(text)
    var multiplier = 1
    if let last = digits.last, last.isLetter {
        switch last.uppercased() {
        case "K": multiplier = 1 << 10
        case "M": multiplier = 1 << 20
        case "G": multiplier = 1 << 30
        case "T": multiplier = 1 << 40
        default: return nil
        }
        digits = digits.dropLast()
    }
    guard let value = Int(digits), value >= 0 else { return nil }
    let (result, overflow) = value.multipliedReportingOverflow(by: multiplier)
    return overflow ? nil : result
}
