// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "chorus",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "chorus", targets: ["chorus"]),
        .library(name: "ChorusLog", targets: ["ChorusLog"]),
        .library(name: "ChorusDomain", targets: ["ChorusDomain"]),
        .library(name: "ChorusProjections", targets: ["ChorusProjections"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
    ],
    targets: [
        // LMDB from the system package `liblmdb-dev`; only ChorusLog imports it.
        .systemLibrary(
            name: "CLMDB",
            path: "Sources/CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"])]
        ),
        // The durable, gapless, group-committed event log.
        .target(
            name: "ChorusLog",
            dependencies: [
                "CLMDB",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/ChorusLog"
        ),
        // Events, commands and the decisions behind them.
        .target(
            name: "ChorusDomain",
            dependencies: [
                "ChorusLog",
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Sources/ChorusDomain"
        ),
        // The projection engine and the read models every screen needs.
        .target(
            name: "ChorusProjections",
            dependencies: [
                "ChorusLog",
                "ChorusDomain",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Projections"
        ),
        // A seeded synthetic social workload: `chorus demo`, benchmarks and tests.
        .target(
            name: "ChorusDemo",
            dependencies: ["ChorusLog", "ChorusDomain"],
            path: "Sources/ChorusDemo"
        ),
        // The `chorus` command for operators.
        .executableTarget(
            name: "chorus",
            dependencies: [
                "ChorusLog",
                "ChorusDomain",
                "ChorusProjections",
                "ChorusDemo",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tools/chorus"
        ),
        // A child process for the crash-safety test: appends until it is killed.
        .executableTarget(
            name: "LogCrashWriter",
            dependencies: ["ChorusLog"],
            path: "Tests/LogCrashWriter"
        ),
        // Helpers every test target shares.
        .target(
            name: "ChorusTestSupport",
            dependencies: ["ChorusDomain"],
            path: "Tests/ChorusTestSupport"
        ),
        .testTarget(
            name: "ChorusLogTests",
            dependencies: ["ChorusLog", "LogCrashWriter", "ChorusTestSupport"],
            path: "Tests/ChorusLogTests"
        ),
        .testTarget(
            name: "ChorusDomainTests",
            dependencies: ["ChorusDomain", "ChorusLog", "ChorusTestSupport"],
            path: "Tests/ChorusDomainTests"
        ),
        .testTarget(
            name: "ChorusProjectionsTests",
            dependencies: ["ChorusProjections", "ChorusDomain", "ChorusLog", "ChorusDemo", "ChorusTestSupport"],
            path: "Tests/ChorusProjectionsTests"
        ),
        // The `chorus` command, run as a process.
        .testTarget(
            name: "ChorusToolTests",
            dependencies: ["chorus"],
            path: "Tests/ChorusToolTests"
        ),
    ]
)
