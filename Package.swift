// swift-tools-version: 6.0
import PackageDescription

/// Release builds of the hot libraries let their callers specialise and inline across modules (the event codec,
/// the store, the keys): without it each generic call across a module boundary looked its metadata up at run time.
let crossModuleOptimization: [SwiftSetting] = [.unsafeFlags(["-cross-module-optimization"], .when(configuration: .release))]

let package = Package(
    name: "chorus",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "chorus", targets: ["chorus"]),
        .library(name: "ChorusLog", targets: ["ChorusLog"]),
        .library(name: "ChorusDomain", targets: ["ChorusDomain"]),
        .library(name: "ChorusProjections", targets: ["ChorusProjections"]),
        .library(name: "ChorusAPI", targets: ["ChorusAPI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/vapor/console-kit", from: "4.16.2"),
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
            path: "Sources/ChorusLog",
            swiftSettings: crossModuleOptimization
        ),
        // Events, commands and the decisions behind them.
        .target(
            name: "ChorusDomain",
            dependencies: [
                "ChorusLog",
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Sources/ChorusDomain",
            swiftSettings: crossModuleOptimization
        ),
        // The projection engine and the read models every screen needs.
        .target(
            name: "ChorusProjections",
            dependencies: [
                "ChorusLog",
                "ChorusDomain",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Projections",
            swiftSettings: crossModuleOptimization
        ),
        // The HTTP API of API.md: routes, auth, media, realtime streams, metrics; and the backend it serves.
        .target(
            name: "ChorusAPI",
            dependencies: [
                "ChorusLog",
                "ChorusDomain",
                "ChorusProjections",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Sources/ChorusAPI",
            resources: [.copy("Resources/openapi.yaml")]
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
                "ChorusAPI",
                "ChorusDemo",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ConsoleKitTerminal", package: "console-kit"),
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
            dependencies: ["ChorusDomain", "ChorusLog", "ChorusProjections"],
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
        // Every route of API.md, in process and over a socket.
        .testTarget(
            name: "ChorusAPITests",
            dependencies: [
                "ChorusAPI", "ChorusDomain", "ChorusLog", "ChorusTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Yams", package: "Yams"),
            ],
            path: "Tests/ChorusAPITests"
        ),
        // The `chorus` command, run as a process.
        .testTarget(
            name: "ChorusToolTests",
            dependencies: ["chorus", "ChorusTestSupport", "ChorusLog", "ChorusDomain", "ChorusAPI"],
            path: "Tests/ChorusToolTests",
            // Read by path: logs as older Chorus versions wrote them.
            exclude: ["Fixtures"]
        ),
    ]
)
