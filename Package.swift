// swift-tools-version:6.2
//
// Ferry — moves CloudKit-shaped data between formats and stores.
//
// Modules point one way, toward the record model:
//
//   ferry (executable) → FerryCLI → FerryKit → FerryStore, FerryArchive, FerryChangeLog, FerryXML
//                                            → FerryJSON → FerryPipeline → FerryPredicate, FerryIO, FerryCompression
//                                                                          → FerryRecords → FerryInternals
//
// FerryRecords is the record model and its JSON mapping (the one JSON engine); it does no I/O.
// FerryPipeline holds record streams, the transform, sort/limit and the run's statistics; every
// format plugs into it as a source and a writer. FerryKit is what the commands do, as a library:
// inputs opened and recognized by path, outputs made, conversion, replay into a state or a store,
// inspect, diff, verify, query, each with its report's text and JSON and one error type
// (FerryError); a Swift program imports it alone (it re-exports the modules its API speaks in).
// FerryCLI parses options into FerryKit's configurations and prints. FerryInternals (no
// product, `package` access) holds what several modules need, once: UTF-8 checks, ISO 8601 date
// math, hex, byte search. System calls live in FerryIO's Syscall; zone identity (ZoneKey) in
// FerryRecords. FerryTestSupport (Tests/, no product) serves the tests; Examples/ holds programs
// a Swift developer copies, built and run by the tests.
// FerryStore is the SQLite record store (the system libsqlite3 through CSQLite).
// Under the `CloudKit` trait: FerryServer (HTTP around any CloudKitResponder) → FerryCloudKit,
// FerryCloudKitAuth (request signing; swift-crypto); FerryCloudKitClient (pull and push over
// async-http-client) → FerryKit, FerryCloudKit, FerryCloudKitAuth.
//
// Strictness (warnings as errors) lives in CI (.ci/run), not in this manifest.
import PackageDescription

let package = Package(
    name: "Ferry",
    products: [
        .library(name: "FerryIO", targets: ["FerryIO"]),
        .library(name: "FerryRecords", targets: ["FerryRecords"]),
        .library(name: "FerryPipeline", targets: ["FerryPipeline"]),
        .library(name: "FerryJSON", targets: ["FerryJSON"]),
        .library(name: "FerryCompression", targets: ["FerryCompression"]),
        .library(name: "FerryPredicate", targets: ["FerryPredicate"]),
        .library(name: "FerryXML", targets: ["FerryXML"]),
        .library(name: "FerryArchive", targets: ["FerryArchive"]),
        .library(name: "FerryChangeLog", targets: ["FerryChangeLog"]),
        .library(name: "FerryStore", targets: ["FerryStore"]),
        .library(name: "FerryKit", targets: ["FerryKit"]),
        .library(name: "FerryCloudKit", targets: ["FerryCloudKit"]),
        .library(name: "FerryCloudKitAuth", targets: ["FerryCloudKitAuth"]),
        .library(name: "FerryServer", targets: ["FerryServer"]),
        .library(name: "FerryCloudKitClient", targets: ["FerryCloudKitClient"]),
        .library(name: "FerryCLI", targets: ["FerryCLI"]),
        .executable(name: "ferry", targets: ["ferry"]),
    ],
    // The `CloudKit` trait (off by default) brings in what speaks CloudKit Web Services over
    // HTTP: the server (Hummingbird, swift-service-lifecycle), request signing (swift-crypto) and
    // the coming client (async-http-client). Without it those packages are never built, so the
    // converter's release build (the README's first command) stays fast. Their targets'
    // sources are wrapped in `#if CloudKit`.
    traits: [
        .trait(name: "CloudKit", description: "CloudKit Web Services over HTTP: the server, request signing, the client"),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.14.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        // System libraries: a module map and a shim header, nothing else.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        // Linux only: gzip output is compressed and whole small gzip files (saved responses) are
        // inflated with it; elsewhere zlib does both. Linked from its static archive (the module
        // map names it; no pkg-config, whose -ldeflate would pick the slower shared library).
        .systemLibrary(
            name: "CLibDeflate",
            providers: [.apt(["libdeflate-dev"])]
        ),
        .systemLibrary(
            name: "CLibXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"]), .brew(["libxml2"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),

        // What Swift cannot reach directly (the CPU affinity mask, prefetch hints, carry-less
        // multiplication for CRC-32), in plain C.
        .target(name: "CFerrySystem"),

        // Internals several modules share, one copy each: UTF-8 checks, ISO 8601 date math, hex,
        // byte search. Not a product; `package` access only.
        .target(name: "FerryInternals"),

        // Byte sources and sinks, files, atomic output, processors available.
        .target(name: "FerryIO", dependencies: ["CFerrySystem"]),
        // The CloudKit record model and its JSON mapping.
        .target(name: "FerryRecords", dependencies: ["FerryInternals", "CFerrySystem"]),
        // The record pipeline: sources → transform → sort/limit → writers, and its statistics.
        .target(name: "FerryPipeline", dependencies: ["FerryRecords", "FerryIO", "FerryPredicate", "FerryInternals"]),
        // JSON record input (NDJSON, saved CKWS responses) and output; the one framer and the
        // one ordered parallel pipeline.
        .target(name: "FerryJSON", dependencies: ["FerryRecords", "FerryIO", "FerryPipeline", "FerryPredicate", "FerryInternals"]),
        // gzip streams, parallel deflate, archives.
        .target(name: "FerryCompression", dependencies: [
            "FerryIO", "FerryInternals", "CZlib", "CFerrySystem", .target(name: "CLibDeflate", condition: .when(platforms: [.linux])),
        ]),
        // NSPredicate format strings: parse, print, compile, validate for CloudKit.
        .target(name: "FerryPredicate", dependencies: ["FerryRecords", "FerryInternals"]),
        // XML import and export over libxml2 (streaming, secure).
        .target(name: "FerryXML", dependencies: ["FerryRecords", "FerryIO", "FerryPipeline", "FerryInternals", "CLibXML2"]),
        // Self-describing archives of a record store (tar + gzip + manifest).
        .target(name: "FerryArchive", dependencies: ["FerryRecords", "FerryIO", "FerryPipeline", "FerryInternals", "FerryJSON", "FerryCompression"]),
        // Change logs, CloudKit change feeds, replay and diff.
        .target(name: "FerryChangeLog", dependencies: ["FerryRecords", "FerryIO", "FerryPipeline", "FerryJSON", "FerryInternals", "CFerrySystem"]),
        // The record store: an embedded SQLite file of zones, records, tokens and a change journal.
        .target(
            name: "FerryStore",
            dependencies: ["FerryRecords", "FerryPipeline", "FerryPredicate", "FerryChangeLog", "FerryIO", "FerryInternals", "CSQLite"]
        ),
        // What the commands do, as a library: open, convert, replay, inspect, diff, verify, query.
        .target(
            name: "FerryKit",
            dependencies: [
                "FerryIO", "FerryRecords", "FerryPipeline", "FerryJSON", "FerryCompression", "FerryPredicate",
                "FerryXML", "FerryArchive", "FerryChangeLog", "FerryStore", "FerryInternals",
            ]
        ),
        // CloudKit Web Services over a store: the wire model (requests and responses of every
        // endpoint), the service that answers them from a RecordStore, errors and limits as CKWS.
        // No HTTP here: the server module carries its exchanges.
        .target(
            name: "FerryCloudKit",
            dependencies: ["FerryRecords", "FerryPipeline", "FerryPredicate", "FerryJSON", "FerryStore", "FerryChangeLog", "FerryIO", "FerryInternals"]
        ),
        // CKWS request authentication: server-to-server signing and verification (ECDSA P-256
        // over `date:base64(sha256(body)):subpath`), PEM keys, API tokens. swift-crypto only, no
        // HTTP, so the server and the client share it. Under the CloudKit trait.
        .target(
            name: "FerryCloudKitAuth",
            dependencies: [
                "FerryInternals",
                .product(name: "Crypto", package: "swift-crypto", condition: .when(traits: ["CloudKit"])),
            ]
        ),
        // The HTTP server around any CloudKitResponder (Hummingbird 2): authentication, fault
        // injection, body limits, the request log, graceful shutdown. Under the CloudKit trait.
        .target(
            name: "FerryServer",
            dependencies: [
                "FerryCloudKit", "FerryCloudKitAuth", "FerryRecords", "FerryIO",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["CloudKit"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["CloudKit"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["CloudKit"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["CloudKit"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["CloudKit"])),
            ]
        ),
        // A CKWS client (async-http-client, one shared HTTPClient) speaking the wire model the
        // server reads, signed or with tokens, retried as CloudKit asks; pulls into and pushes
        // from any output and input FerryKit knows. Under the CloudKit trait.
        .target(
            name: "FerryCloudKitClient",
            dependencies: [
                "FerryCloudKit", "FerryCloudKitAuth", "FerryKit", "FerryStore", "FerryChangeLog", "FerryPredicate", "FerryRecords",
                "FerryPipeline", "FerryIO", "FerryInternals",
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["CloudKit"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["CloudKit"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["CloudKit"])),
            ]
        ),
        // The `ferry` commands: options parsed into FerryKit's configurations, reports printed.
        // `ferry serve` starts FerryServer around FerryCloudKit's service (under the CloudKit trait;
        // without it the command is listed and says which build serves).
        .target(
            name: "FerryCLI",
            dependencies: [
                "FerryKit", "FerryIO", "FerryRecords", "FerryPipeline", "FerryJSON", "FerryPredicate",
                "FerryArchive", "FerryChangeLog", "FerryStore", "FerryInternals",
                "FerryCloudKit", "FerryCloudKitAuth", "FerryServer", "FerryCloudKitClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(name: "ferry", dependencies: ["FerryCLI"]),
        // A program a Swift developer copies: saved query responses into a store, queried.
        .executableTarget(name: "ferry-example-convert-and-query", dependencies: ["FerryKit"], path: "Examples/ConvertAndQuery"),
        // The HTTP layer around a responder that echoes requests back (Docs/Serve.md's curl session).
        .executableTarget(
            name: "ferry-example-echo-server", dependencies: ["FerryServer", "FerryCloudKit", "FerryCloudKitAuth"],
            path: "Examples/EchoServer"),

        // Shared by the tests: seeded generators, fixtures, chunked feeding. Not a product;
        // Benchmarks/Sources/FerryHistories links the three generator files in by symlink.
        .target(name: "FerryTestSupport", dependencies: ["FerryIO", "FerryRecords", "FerryPipeline", "FerryStore"], path: "Tests/FerryTestSupport"),

        .testTarget(name: "FerryIOTests", dependencies: ["FerryIO", "FerryTestSupport"]),
        .testTarget(name: "FerryRecordsTests", dependencies: ["FerryRecords", "FerryTestSupport"]),
        .testTarget(
            name: "FerryJSONTests",
            dependencies: ["FerryJSON", "FerryRecords", "FerryIO", "FerryPipeline", "FerryPredicate", "FerryTestSupport"]
        ),
        .testTarget(
            name: "FerryCompressionTests",
            dependencies: ["FerryCompression", "FerryIO", "FerryTestSupport"]
        ),
        .testTarget(
            name: "FerryPredicateTests",
            dependencies: ["FerryPredicate", "FerryRecords", "FerryTestSupport"]
        ),
        .testTarget(name: "FerryXMLTests", dependencies: ["FerryXML", "FerryRecords", "FerryIO", "FerryJSON", "FerryTestSupport"]),
        .testTarget(name: "FerryArchiveTests", dependencies: ["FerryArchive", "FerryRecords", "FerryIO", "FerryInternals", "FerryJSON", "FerryCompression", "FerryTestSupport"]),
        .testTarget(name: "FerryChangeLogTests", dependencies: ["FerryChangeLog", "FerryRecords", "FerryIO", "FerryJSON", "FerryTestSupport"]),
        .testTarget(
            name: "FerryStoreTests",
            dependencies: ["FerryStore", "FerryChangeLog", "FerryPredicate", "FerryRecords", "FerryIO", "FerryJSON", "FerryTestSupport"]
        ),
        .testTarget(
            name: "FerryCLITests",
            dependencies: ["FerryCLI", "FerryKit", "FerryChangeLog", "FerryArchive", "FerryStore", "FerryRecords", "FerryIO", "FerryJSON",
                           "FerryInternals", "FerryTestSupport"],
            exclude: ["Golden"]
        ),
        .testTarget(
            name: "FerryCloudKitTests",
            dependencies: ["FerryCloudKit", "FerryStore", "FerryRecords", "FerryPredicate", "FerryChangeLog", "FerryKit", "FerryTestSupport"]
        ),
        .testTarget(
            name: "FerryCloudKitAuthTests",
            dependencies: ["FerryCloudKitAuth"],
            exclude: ["Vectors"]
        ),
        .testTarget(
            name: "FerryServerTests",
            dependencies: [
                "FerryServer", "FerryCloudKit", "FerryCloudKitAuth", "FerryCloudKitClient", "FerryStore", "FerryRecords", "FerryPredicate",
                "FerryChangeLog", "FerryKit", "FerryTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["CloudKit"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["CloudKit"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["CloudKit"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["CloudKit"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["CloudKit"])),
            ]
        ),
        .testTarget(
            name: "FerryKitTests",
            dependencies: ["FerryKit", "FerryTestSupport", "ferry-example-convert-and-query"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
