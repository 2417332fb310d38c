// swift-tools-version: 6.0
import PackageDescription

/// Release builds of the hot libraries let their callers specialise and inline across modules (the event codec,
/// the store, the keys): without it each generic call across a module boundary looked its metadata up at run time.
let crossModuleOptimization: [SwiftSetting] = [
    .unsafeFlags(["-cross-module-optimization"], .when(configuration: .release))
]

let package = Package(
    name: "chorus",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .executable(name: "chorus", targets: ["chorus"]),
        .library(name: "ChorusLog", targets: ["ChorusLog"]),
        .library(name: "ChorusLMDBLog", targets: ["ChorusLMDBLog"]),
        .library(name: "ChorusDomain", targets: ["ChorusDomain"]),
        .library(name: "ChorusProjections", targets: ["ChorusProjections"]),
        .library(name: "ChorusBackend", targets: ["ChorusBackend"]),
        .library(name: "ChorusHTTP", targets: ["ChorusHTTP"]),
        // The Swift client SDK for apps.
        .library(name: "ChorusClient", targets: ["ChorusClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/vapor/console-kit", from: "4.16.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession", from: "1.4.0"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client", from: "1.5.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/adam-fowler/compress-nio", from: "1.5.0"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
    ],
    targets: [
        // LMDB from the system package `liblmdb-dev`; only ChorusStorage imports it.
        .systemLibrary(
            name: "CLMDB",
            path: "Sources/CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"])]
        ),
        // libvips from the system package `libvips-dev`; only CVipsCalls includes it.
        .systemLibrary(
            name: "CVips",
            path: "Sources/CVips",
            pkgConfig: "vips",
            providers: [.apt(["libvips-dev"])]
        ),
        // libvips' operations, whose options are variadic arguments Swift cannot pass, as plain C functions over an
        // opaque image; only ChorusImaging imports it.
        .target(name: "CVipsCalls", dependencies: ["CVips"], path: "Sources/CVipsCalls"),
        // CRC-32C with the CPU's instruction, which Swift cannot emit; only ChorusLog imports it (the record format).
        .target(name: "CCRC32C", path: "Sources/CCRC32C"),
        // posix_spawn with the options glibc declares only under _GNU_SOURCE; only ChorusProcesses imports it.
        .target(name: "CSpawn", path: "Sources/CSpawn"),
        // File calls glibc declares only under _GNU_SOURCE: write-back started without waiting (sync_file_range), disk
        // blocks allocated past a file's end (fallocate); only ChorusStorage imports it.
        .target(name: "CFileCalls", path: "Sources/CFileCalls"),
        // Bytes, fast: strings' UTF-8 borrowed where it lies, JSON strings and numbers written into bytes, the byte
        // order keys sort in. For the log's records, the stores' keys, the server's answers and the tools' JSON lines.
        .target(name: "ChorusText", path: "Sources/ChorusText", swiftSettings: crossModuleOptimization),
        // Child processes started and reaped without Foundation's Process: servers in tests, PostgreSQL's programs,
        // benchmark helpers.
        .target(name: "ChorusProcesses", dependencies: ["CSpawn"], path: "Sources/ChorusProcesses"),
        // What tests and benchmarks start: free loopback ports, the programs built beside this one, a throwaway
        // PostgreSQL. Only the tests and `chorus bench` link it, never the server's modules.
        .target(name: "ChorusFixtures", dependencies: ["ChorusProcesses"], path: "Sources/ChorusFixtures"),
        // The image pipeline on libvips: an upload checked, turned upright, stripped of every piece of metadata and
        // written anew as the `large` and `small` variants with its BlurHash. Run in child processes only.
        .target(name: "ChorusImaging", dependencies: ["CVipsCalls"], path: "Sources/ChorusImaging"),
        // LMDB for the rest of the package: environments, transactions, key-value stores, key-order loads.
        .target(
            name: "ChorusStorage",
            dependencies: [
                "CLMDB",
                "CFileCalls",
                "ChorusText",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/ChorusStorage",
            swiftSettings: crossModuleOptimization
        ),
        // The event log's seam: the `EventLog` protocol, its values, the record format, appends prepared off the
        // writer, and the in-memory log for tests. No storage: every log implements it.
        .target(
            name: "ChorusLog",
            dependencies: ["CCRC32C", "ChorusText"],
            path: "Sources/ChorusLog",
            swiftSettings: crossModuleOptimization
        ),
        // The durable, gapless, group-committed log in LMDB, behind the seam.
        .target(
            name: "ChorusLMDBLog",
            dependencies: [
                "ChorusLog",
                "ChorusText",
                "ChorusStorage",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/ChorusLMDBLog",
            swiftSettings: crossModuleOptimization
        ),
        // Events, commands and the decisions behind them.
        .target(
            name: "ChorusDomain",
            dependencies: [
                "ChorusLog",
                "ChorusText",
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Sources/ChorusDomain",
            swiftSettings: crossModuleOptimization
        ),
        // Each user's data key, kept in a store of its own in the data directory (the cluster keeps them in
        // PostgreSQL, this store its cache).
        .target(
            name: "ChorusDataKeys",
            dependencies: [
                "ChorusStorage",
                "ChorusDomain",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Sources/ChorusDataKeys",
            swiftSettings: crossModuleOptimization
        ),
        // The projection engine, every read model with its queries, and the runtime that serves them live.
        .target(
            name: "ChorusProjections",
            dependencies: [
                "ChorusStorage",
                "ChorusLog",
                "ChorusDomain",
                "ChorusProcesses",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Projections",
            swiftSettings: crossModuleOptimization
        ),
        // Cluster mode: the log kept in PostgreSQL, shared by every node, each node's LMDB log a replica tailing it.
        .target(
            name: "ChorusCluster",
            dependencies: [
                "ChorusLog",
                "ChorusLMDBLog",
                "ChorusDomain",
                "ChorusDataKeys",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/ChorusCluster"
        ),
        // The composition root: a data directory opened whole (log, decisions, read models, media, stored
        // responses), commands executed against it, and the services that keep it running.
        .target(
            name: "ChorusBackend",
            dependencies: [
                "ChorusStorage",
                "ChorusLog",
                "ChorusLMDBLog",
                "ChorusDomain",
                "ChorusDataKeys",
                "ChorusProjections",
                "ChorusCluster",
                "ChorusProcesses",
                "ChorusImaging",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Sources/ChorusBackend"
        ),
        // Delivery from the log: a durable outbox that follows it, and a sender that retries across restarts; today
        // the signed webhooks, whose content the HTTP API renders.
        .target(
            name: "ChorusDelivery",
            dependencies: [
                "ChorusStorage",
                "ChorusLog",
                "ChorusDomain",
                "ChorusProjections",
                "ChorusCluster",
                "ChorusBackend",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Sources/ChorusDelivery"
        ),
        // The HTTP API of openapi.yaml over a backend: routes, request decoding, JSON, middleware, live streams, the
        // server, and the content of the signed webhooks ChorusDelivery sends.
        .target(
            name: "ChorusHTTP",
            dependencies: [
                "ChorusLog",
                "ChorusDomain",
                "ChorusProjections",
                "ChorusBackend",
                "ChorusCluster",
                "ChorusDelivery",
                "ChorusImaging",
                "ChorusText",
                "ChorusEventText",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "Mustache", package: "swift-mustache"),
                "ChorusStorage",
            ],
            path: "Sources/ChorusHTTP",
            resources: [.copy("Resources/openapi.yaml")]
        ),
        // The log's events as people and tools read them: decoded field by field, as lines and JSON objects, filtered,
        // with text made safe for terminals. For `chorus replay` and `chorus log export`, and the console's Log page.
        .target(
            name: "ChorusEventText",
            dependencies: ["ChorusLog", "ChorusDomain", "ChorusText"],
            path: "Sources/ChorusEventText",
            swiftSettings: crossModuleOptimization
        ),
        // A seeded synthetic social workload: `chorus demo`, benchmarks and tests.
        .target(
            name: "ChorusDemo",
            dependencies: ["ChorusLog", "ChorusDomain"],
            path: "Sources/ChorusDemo"
        ),
        // The client SDK: the HTTP layer generated from openapi.yaml (Generated/, by Scripts/generate-client) and the
        // layer apps call: sign-in with a token store, pages, read-your-writes, live streams that resume.
        .target(
            name: "ChorusClient",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(
                    name: "OpenAPIURLSession", package: "swift-openapi-urlsession",
                    condition: .when(platforms: [.macOS, .iOS, .tvOS, .watchOS, .visionOS])),
                .product(
                    name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client",
                    condition: .when(platforms: [.linux])),
            ],
            path: "Sources/ChorusClient",
            exclude: ["Generated/openapi.yaml.sha256"]
        ),
        // The `chorus` command for operators.
        .executableTarget(
            name: "chorus",
            dependencies: [
                "ChorusStorage",
                "ChorusLog",
                "ChorusLMDBLog",
                "ChorusDomain",
                "ChorusDataKeys",
                "ChorusProjections",
                "ChorusBackend",
                "ChorusCluster",
                "ChorusHTTP",
                "ChorusDelivery",
                "ChorusDemo",
                "ChorusImaging",
                "ChorusProcesses", "ChorusFixtures", "ChorusPushPeers",
                "ChorusText", "ChorusEventText",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "ConsoleKitTerminal", package: "console-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tools/chorus"
        ),
        // A child process for the crash-safety test: appends until it is killed.
        .executableTarget(
            name: "LogCrashWriter",
            dependencies: ["ChorusLog", "ChorusLMDBLog"],
            path: "Tests/LogCrashWriter"
        ),
        // APNs- and FCM-compatible servers on loopback, with a CA of their own: for the tests and `chorus bench push`.
        .target(
            name: "ChorusPushPeers",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            path: "Sources/ChorusPushPeers"
        ),
        // Helpers every test target shares.
        .target(
            name: "ChorusTestSupport",
            dependencies: [
                "ChorusStorage", "ChorusDomain", "ChorusLog", "ChorusLMDBLog", "ChorusProjections",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/ChorusTestSupport",
            // Read by path: real image files.
            exclude: ["Images"]
        ),
        .testTarget(
            name: "ChorusStorageTests",
            dependencies: ["ChorusStorage", "ChorusText", "ChorusTestSupport"],
            path: "Tests/ChorusStorageTests"
        ),
        .testTarget(
            name: "ChorusLogTests",
            dependencies: [
                "CCRC32C", "ChorusLog", "ChorusLMDBLog", "ChorusStorage", "ChorusProcesses", "ChorusFixtures",
                "LogCrashWriter",
                "ChorusTestSupport",
            ],
            path: "Tests/ChorusLogTests"
        ),
        .testTarget(
            name: "ChorusDomainTests",
            dependencies: [
                "ChorusDomain", "ChorusDataKeys", "ChorusLog", "ChorusLMDBLog", "ChorusText", "ChorusTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/ChorusDomainTests"
        ),
        .testTarget(
            name: "ChorusProjectionsTests",
            dependencies: [
                "ChorusProjections", "ChorusStorage", "ChorusDomain", "ChorusLog", "ChorusLMDBLog", "ChorusDemo",
                "ChorusTestSupport",
            ],
            path: "Tests/ChorusProjectionsTests"
        ),
        .testTarget(
            name: "ChorusBackendTests",
            dependencies: [
                "ChorusBackend", "ChorusImaging", "ChorusProjections", "ChorusStorage", "ChorusDomain", "ChorusLog",
                "ChorusLMDBLog",
                "ChorusTestSupport",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/ChorusBackendTests"
        ),
        // Every route of openapi.yaml, in process and over a socket.
        .testTarget(
            name: "ChorusHTTPTests",
            dependencies: [
                "ChorusHTTP", "ChorusText", "ChorusBackend", "ChorusProjections", "ChorusDomain", "ChorusLog",
                "ChorusLMDBLog", "ChorusDemo", "ChorusDelivery",
                "ChorusTestSupport",
                "ChorusProcesses",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/ChorusHTTPTests"
        ),
        // Push's own pieces: the APNs provider token and FCM's access token, checked as Apple and Google check them.
        .testTarget(
            name: "ChorusDeliveryTests",
            dependencies: [
                "ChorusDelivery", "ChorusPushPeers",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            path: "Tests/ChorusDeliveryTests"
        ),
        // The image pipeline's own pieces: the BlurHash encoder against a reference.
        .testTarget(name: "ChorusImagingTests", dependencies: ["ChorusImaging"], path: "Tests/ChorusImagingTests"),
        // The SDK on its own: its generated layer is up to date, its pages and live streams.
        .testTarget(
            name: "ChorusClientTests",
            dependencies: [
                "ChorusClient",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            ],
            path: "Tests/ChorusClientTests"
        ),
        // The `chorus` command, run as a process: end to end.
        // The modules' imports against docs/ARCHITECTURE.md's module table.
        .testTarget(name: "ArchitectureTests", path: "Tests/ArchitectureTests"),
        // Every Swift sample of README.md and docs/, compiled, and checked to be what the docs show.
        .testTarget(
            name: "DocSampleTests",
            dependencies: [
                "ChorusClient", "ChorusLog", "ChorusLMDBLog", "ChorusDomain", "ChorusProjections", "ChorusBackend",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/DocSampleTests"
        ),
        .testTarget(
            name: "ChorusToolTests",
            dependencies: [
                "chorus", "ChorusTestSupport", "ChorusLog", "ChorusDomain", "ChorusBackend", "ChorusCluster",
                "ChorusProcesses", "ChorusFixtures", "ChorusPushPeers",
                // A webhook receiver on loopback.
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                // The five apps, through the SDK.
                "ChorusClient",
                // Requests to the servers the tests start.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tests/ChorusToolTests",
            // Read by path: logs as older Chorus versions wrote them.
            exclude: ["Fixtures"]
        ),
    ]
)
