// swift-tools-version:6.2
//
// Ferry's libFuzzer harnesses, one executable each. A package of its own (like Benchmarks/), so
// `swift build` and `swift test` of Ferry never compile them. Build and run them with
// Scripts/fuzz; Fuzz/README.md lists what each checks.
import PackageDescription

/// Each harness and the Ferry products it drives.
let harnesses: [(name: String, products: [String], support: [Target.Dependency])] = [
    ("record-line", ["FerryIO", "FerryRecords", "FerryJSON", "FerryPipeline"], ["FuzzPassThrough"]),
    ("responses", ["FerryIO", "FerryRecords", "FerryJSON", "FerryPipeline"], ["FuzzPassThrough"]),
    ("changelog", ["FerryIO", "FerryRecords", "FerryChangeLog"], []),
    ("predicate", ["FerryRecords", "FerryPredicate"], []),
    ("xml", ["FerryIO", "FerryRecords", "FerryXML"], []),
    ("gzip", ["FerryIO", "FerryCompression"], []),
    ("archive", ["FerryIO", "FerryRecords", "FerryJSON", "FerryCompression", "FerryArchive", "FerryPipeline"], []),
    ("schema", ["FerryPredicate"], []),
    ("store-sql", ["FerryRecords", "FerryPredicate", "FerryStore"], []),
    ("serve", ["FerryRecords", "FerryStore", "FerryCloudKit"], []),
]

let package = Package(
    name: "FerryFuzz",
    dependencies: [.package(name: "Ferry", path: "..")],
    targets: [
        // libFuzzer's driver, the input cap and the check every harness uses.
        .target(name: "FuzzDriver"),
        // The check that records passed through a conversion (transcoded) come out as decoded
        // and encoded records do.
        .target(name: "FuzzPassThrough", dependencies: [
            "FuzzDriver", .product(name: "FerryIO", package: "Ferry"), .product(name: "FerryRecords", package: "Ferry"),
            .product(name: "FerryJSON", package: "Ferry"), .product(name: "FerryPipeline", package: "Ferry"),
        ]),
    ] + harnesses.map { harness in
        .executableTarget(
            name: harness.name,
            dependencies: ["FuzzDriver"] + harness.support + harness.products.map { .product(name: $0, package: "Ferry") },
            path: "Sources/\(harness.name)"
        )
    },
    swiftLanguageModes: [.v6]
)
