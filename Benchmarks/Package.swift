// swift-tools-version:6.2
// Ferry's benchmarks: a separate package so the main build stays light.
// Runs Ferry and the peer tools on the same data in the same run and prints medians and ratios.
//
//   swift build -c release --static-swift-stdlib             # the ferry binary, at the root
//   swift build -c release --package-path Benchmarks         # ferry-bench and its helpers
//   Benchmarks/.build/release/ferry-bench [TASK ...]         # or `all`
import PackageDescription

let package = Package(
    name: "FerryBenchmarks",
    dependencies: [
        .package(name: "Ferry", path: ".."),
    ],
    targets: [
        // The driver: spawns Ferry and the peers, prints medians, ratios and peak RSS.
        .executableTarget(name: "ferry-bench", path: "Sources/FerryBench"),
        // Ferry's gzip streams as a command, so they are timed as processes like pigz and gzip.
        .executableTarget(
            name: "ferry-gzip",
            dependencies: [
                .product(name: "FerryCompression", package: "Ferry"),
                .product(name: "FerryIO", package: "Ferry"),
            ],
            path: "Sources/FerryGzip"
        ),
        // In-process measurements: compiled-filter evaluations per second, decode/encode split.
        .executableTarget(
            name: "ferry-micro",
            dependencies: [
                .product(name: "FerryRecords", package: "Ferry"),
                .product(name: "FerryJSON", package: "Ferry"),
                .product(name: "FerryPredicate", package: "Ferry"),
                .product(name: "FerryIO", package: "Ferry"),
            ],
            path: "Sources/FerryMicro"
        ),
        // The shared benchmark's change events in Ferry's change-log format, for `replay` (untimed).
        .executableTarget(
            name: "ferry-bench-changes",
            dependencies: [
                .product(name: "FerryChangeLog", package: "Ferry"),
                .product(name: "FerryRecords", package: "Ferry"),
                .product(name: "FerryCompression", package: "Ferry"),
                .product(name: "FerryIO", package: "Ferry"),
            ],
            path: "Sources/FerryBenchChanges"
        ),
        // A generated history with the states replay must produce, for `replay-check`. The
        // generators are the tests' own (Tests/FerryTestSupport), symlinked into Generators/.
        .executableTarget(
            name: "ferry-histories",
            dependencies: [
                .product(name: "FerryRecords", package: "Ferry"),
            ],
            path: "Sources/FerryHistories"
        ),
        // A load generator for `ferry serve`: concurrent keep-alive clients sending CKWS lookups,
        // queries and creates over loopback (POSIX sockets and threads only), for the `serve` task.
        .executableTarget(name: "ferry-load", path: "Sources/FerryLoad"),
        // The least CPU time inflating a folder of `.json.gz` responses costs (libdeflate, one
        // thread, nothing decoded): the floor under any gzipped folder's time.
        .executableTarget(
            name: "inflate-floor",
            path: "Sources/InflateFloor",
            linkerSettings: [.linkedLibrary("deflate", .when(platforms: [.linux]))]
        ),
    ],
    swiftLanguageModes: [.v6]
)
