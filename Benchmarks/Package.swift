// swift-tools-version:6.2
// Ferry's benchmarks: a separate package so the main build stays light.
// Runs Ferry and the peer tools on the same data in the same run and prints medians and ratios.
import PackageDescription

let package = Package(
    name: "FerryBenchmarks",
    targets: [
        .executableTarget(name: "ferry-bench", path: "Sources/FerryBench"),
    ],
    swiftLanguageModes: [.v6]
)
