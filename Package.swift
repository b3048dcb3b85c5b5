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
        .library(name: "FerryCLI", targets: ["FerryCLI"]),
        .executable(name: "ferry", targets: ["ferry"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
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
        // The `ferry` commands: options parsed into FerryKit's configurations, reports printed.
        .target(
            name: "FerryCLI",
            dependencies: [
                "FerryKit", "FerryIO", "FerryRecords", "FerryPipeline", "FerryJSON", "FerryPredicate",
                "FerryArchive", "FerryChangeLog", "FerryStore", "FerryInternals",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(name: "ferry", dependencies: ["FerryCLI"]),
        // A program a Swift developer copies: saved query responses into a store, queried.
        .executableTarget(name: "ferry-example-convert-and-query", dependencies: ["FerryKit"], path: "Examples/ConvertAndQuery"),

        // Shared by the tests: seeded generators, fixtures, chunked feeding. Not a product;
        // Benchmarks/Sources/FerryHistories links the three generator files in by symlink.
        .target(name: "FerryTestSupport", dependencies: ["FerryIO", "FerryRecords", "FerryPipeline"], path: "Tests/FerryTestSupport"),

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
            name: "FerryKitTests",
            dependencies: ["FerryKit", "FerryTestSupport", "ferry-example-convert-and-query"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
