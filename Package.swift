// swift-tools-version:6.1
import PackageDescription

/// Settings every Swift target shares: Swift 6 language mode (the tools version's default) plus the
/// upcoming features that keep imports honest and existentials explicit, and lifetime
/// dependencies (`@_lifetime`), with which the borrowed views of a consumed record (`RecordView`,
/// non-escapable: SE-0446) tie each span they hand out to the message that lends it. Swift 6.3
/// still has them behind the experimental flag `Lifetimes`, as apple/swift-binary-parsing uses them.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableExperimentalFeature("Lifetimes"),
]

/// jemalloc in place of glibc's malloc, for the whole process (the Swift runtime and the static
/// librdkafka included): a consumed record's buffer is allocated on the poll thread and freed on a
/// worker thread, and with glibc's arenas and consolidation the gate-only path spent about 8 % more
/// CPU per record and a webhook call about 20 % more (docs/performance.md, "jemalloc").
let jemalloc: [LinkerSetting] = [.linkedLibrary("jemalloc", .when(platforms: [.linux]))]

let package = Package(
    name: "notification-dispatcher",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "notification-dispatcher", targets: ["notification-dispatcher"]),
        .executable(name: "notification-dispatcher-bench", targets: ["notification-dispatcher-bench"]),
        .library(name: "Records", targets: ["Records"]),
        .library(name: "Kafka", targets: ["Kafka"]),
        .library(name: "JSON", targets: ["JSON"]),
        .library(name: "Notifications", targets: ["Notifications"]),
        .library(name: "Dispatcher", targets: ["Dispatcher"]),
        .library(name: "DispatcherTools", targets: ["DispatcherTools"]),
        .library(name: "ServiceExtensions", targets: ["ServiceExtensions"]),
        .library(name: "DispatcherService", targets: ["DispatcherService"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // TLS for webhook calls and attachment downloads.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        // Property-based tests of the worker core's state machine (random event sequences,
        // shrunk counter-examples): test targets only.
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
    ],
    targets: [
        // librdkafka 2.8 or later, static, built from Debian's source package by
        // `scripts/install-librdkafka` (Debian 12's librdkafka-dev 2.0.2 cannot reach some brokers):
        // `rdkafka.h` and the mock cluster `rdkafka_mock.h`.
        .systemLibrary(
            name: "CRdKafka",
            pkgConfig: "rdkafka"
        ),
        // OpenSSL's libcrypto (already linked for librdkafka's TLS): SHA-1 of the derived apns-id
        // with the context on the stack (swift-crypto's `Insecure.SHA1` allocated, copied and cleared
        // a context object per hash: a derived identifier took 325-368 ns with it, 114-155 ns
        // without), and the EVP interface under `OpenSSLCrypto`.
        .systemLibrary(name: "COpenSSLDigest"),
        // The JSON scanner's sixteen-bytes-at-a-time step (SSE2 or NEON) through a header-only C
        // function, which Swift's compiler inlines: Swift's SIMD types compiled to a loop per byte.
        // SwiftPM does not track this header as a dependency of the Swift modules that inline it:
        // after editing it, touch a file of Sources/JSON (or remove .build/*/JSON.build) so that
        // JSON is compiled again.
        .systemLibrary(name: "CJSONScan"),
        // Standard output line-buffered, for the bench (Swift 6 cannot name C's `stdout`).
        .systemLibrary(name: "CStandardOutput"),
        // libFuzzer's driver, declared for the fuzzer's `main` (docs/testing.md, "Fuzzing"): linked
        // only when the fuzzer is built with `-sanitize=fuzzer` (scripts/fuzz).
        .systemLibrary(name: "CLibFuzzer"),
        // The one way blocking work (librdkafka, getaddrinfo, file I/O, standard input) leaves
        // Swift's cooperative pool: a thread of its own, or a call on Dispatch's global queue.
        .target(
            name: "BlockingWork",
            swiftSettings: swiftSettings
        ),
        // How the package starts child processes (the benchmarks' contenders, the tests' brokers
        // and programs): posix_spawn and wait4, never Foundation's Process, whose run() crashes
        // now and then on Swift 6.3.1 for Linux (swift-corelibs-foundation PR #5472).
        .target(
            name: "ChildProcesses",
            swiftSettings: swiftSettings
        ),
        // SHA-256 and AES-GCM, a small Swift face over libcrypto's EVP interface, so that no module
        // touches a C context: each is owned by one object or one call and freed on every path.
        // In place of swift-crypto, which compiled a whole BoringSSL (hundreds of C files) for these
        // two. Standard library only besides the shim.
        .target(
            name: "OpenSSLCrypto",
            dependencies: ["COpenSSLDigest"],
            swiftSettings: swiftSettings
        ),
        // What a Kafka record is on both sides of the Kafka layer: its headers and its position
        // (topic, partition, offset). One type each, shared by the Kafka client and the request
        // model, so that a consumed record's headers reach the rules, and an output's headers the
        // producer, without a copy. Standard library only.
        .target(
            name: "Records",
            swiftSettings: swiftSettings
        ),
        // The only module that calls `rd_kafka_*`: producer, consumer, admin, embedded broker.
        .target(
            name: "Kafka",
            dependencies: [
                "BlockingWork",
                "Records",
                "JSON",
                "CRdKafka",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The JSON toolkit: the parser, the validating scanner, the value tree and the writer.
        // Standard library only, so every module that reads or writes JSON can share it.
        .target(
            name: "JSON",
            dependencies: ["CJSONScan"],
            swiftSettings: swiftSettings
        ),
        // The APNs request model and its validation. No Kafka, no networking.
        .target(
            name: "Notifications",
            dependencies: [
                "JSON",
                "Records",
                // SHA-1 of the derived apns-id (UUID version 5), which uses the CPU's SHA
                // instructions where there are some.
                "COpenSSLDigest",
            ],
            swiftSettings: swiftSettings
        ),
        // The delivery rules (gating, routing, deadlines, app side), the extension protocol and the
        // configuration model. No Kafka.
        .target(
            name: "Dispatcher",
            dependencies: [
                "Records",
                "BlockingWork",
                "JSON",
                "Notifications",
                .product(name: "Yams", package: "Yams"),
                .product(name: "Logging", package: "swift-log"),
                // SHA-256 of a Live Activity's token (SEMANTICS section 14.2).
                "OpenSSLCrypto",
            ],
            swiftSettings: swiftSettings
        ),
        // What only the command-line tool needs of the rules: `explain` and `lint` (a decision told
        // step by step with its citations) and the offline JSON-lines record format of `dispatch`.
        // Out of Dispatcher, so that the module the worker links holds the rules alone.
        .target(
            name: "DispatcherTools",
            dependencies: ["Records", "BlockingWork", "JSON", "Notifications", "Dispatcher"],
            swiftSettings: swiftSettings
        ),
        // The built-in extensions' HTTP/1.1 client on SwiftNIO: webhook calls on kept-alive
        // connections pooled per endpoint, one buffer written and one continuation resumed per
        // call; an attachment download's GETs, each on a connection of its own, streamed.
        .target(
            name: "WebhookHTTP",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        // A small HTTP/1.1 server on SwiftNIO (keep-alive, streamed responses, graceful shutdown as a
        // `Service`): the worker's `/metrics` and `/health`, the bench's webhook receiver and the
        // tests' loopback servers: the few routes these need did not justify a web framework's
        // share of a cold build (docs/testing.md, "Where the build's time goes").
        .target(
            name: "HTTPServer",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // Built-in service extensions: rewrite, webhook, attachment, decrypt.
        .target(
            name: "ServiceExtensions",
            dependencies: [
                "Records",
                "BlockingWork",
                "Dispatcher",
                "JSON",
                "Notifications",
                "WebhookHTTP",
                // SHA-256 of a downloaded attachment, AES-GCM of the `decrypt` kind.
                "OpenSSLCrypto",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The worker: consume, dispatch, produce, commit; metrics and health; and the application
        // that runs them together (`serve`, `dev`, or a program that embeds the dispatcher).
        .target(
            name: "DispatcherService",
            dependencies: [
                "Records",
                "BlockingWork",
                "Kafka",
                "Notifications",
                "Dispatcher",
                "ServiceExtensions",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                "HTTPServer",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "notification-dispatcher",
            dependencies: [
                "Records",
                "Kafka",
                "JSON",
                "Notifications",
                "Dispatcher",
                "DispatcherTools",
                "ServiceExtensions",
                "DispatcherService",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            // The `dev` demo's configuration and samples, built into the binary so that it runs
            // from any folder: `Demo/` links to `Config/dispatcher.yaml` and `Config/samples/`.
            resources: [.embedInCode("Demo/dispatcher.yaml"), .embedInCode("Demo/samples")],
            swiftSettings: swiftSettings,
            linkerSettings: jemalloc
        ),
        // The benchmarks and the soak, a binary of their own (`notification-dispatcher-bench`), so
        // that the product carries none of their code: they start the product beside them in the
        // build folder (`serve` as the contender, `broker`, `dispatch`), or `--serve-binary`.
        .executableTarget(
            name: "notification-dispatcher-bench",
            dependencies: [
                "CStandardOutput",
                "ChildProcesses",
                "Records",
                "BlockingWork",
                "Kafka",
                "JSON",
                "Notifications",
                "Dispatcher",
                "DispatcherTools",
                "ServiceExtensions",
                "DispatcherService",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                "HTTPServer",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Sources/Bench",
            swiftSettings: swiftSettings,
            // `bench run` and `bench validation` time the worker and the validator in this
            // process: on the product's malloc, so that their figures are the product's.
            linkerSettings: jemalloc
        ),
        // The fuzzer (docs/testing.md, "Fuzzing"): libFuzzer's bytes made into a request record,
        // through the validator and the one decision, its value's JSON read by every reader here and
        // by Foundation's. `scripts/fuzz` builds it with `-sanitize=fuzzer` and `-D FUZZING`, under
        // which its `main` runs libFuzzer's driver; the plain build replays inputs, so the committed
        // corpus (`Fuzz/corpus`) is a regression suite (FuzzCorpusTests). Not a product; no jemalloc,
        // which AddressSanitizer's allocator replaces. `dispatcher.yaml` links to `Config/dispatcher.yaml`.
        .executableTarget(
            name: "notification-dispatcher-fuzz",
            dependencies: ["Records", "JSON", "Notifications", "Dispatcher", "DispatcherTools", "CLibFuzzer"],
            path: "Sources/Fuzz",
            resources: [.embedInCode("dispatcher.yaml")],
            swiftSettings: swiftSettings
        ),
        // The program of docs/extensions.md, "Embedding the dispatcher": DispatcherApplication
        // with a service extension written in Swift. Built with the package, so that the text the
        // documentation shows compiles, and run by EmbeddedDispatcherExampleTests.
        .executableTarget(
            name: "EmbeddedDispatcher",
            dependencies: [
                "Dispatcher",
                "DispatcherService",
                "JSON",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            path: "Examples/EmbeddedDispatcher",
            swiftSettings: swiftSettings
        ),
        // Helpers every test target shares: child processes, bounded waits, the built binary, servers
        // on loopback, and the one builder of the records tests make (`TestRecord`).
        .target(
            name: "TestSupport",
            dependencies: [
                "ChildProcesses",
                "Records",
                "Kafka",
                "JSON",
                "Notifications",
                "HTTPServer",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/TestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RecordsTests",
            dependencies: ["Records"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ChildProcessesTests",
            dependencies: ["ChildProcesses", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "OpenSSLCryptoTests",
            dependencies: ["OpenSSLCrypto"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KafkaTests",
            dependencies: ["Records", "Kafka", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "JSONTests",
            dependencies: ["JSON", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NotificationsTests",
            dependencies: ["Records", "JSON", "Notifications", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "DispatcherTests",
            dependencies: [
                "Records",
                "TestSupport",
                "Dispatcher",
                "DispatcherTools",
                "JSON",
                "Notifications",
                "ServiceExtensions",
                "HTTPServer",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "WebhookHTTPTests",
            dependencies: [
                "WebhookHTTP",
                "TestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HTTPServerTests",
            dependencies: [
                "HTTPServer",
                "TestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ServiceExtensionsTests",
            dependencies: [
                "Records",
                "TestSupport",
                "ServiceExtensions",
                "Dispatcher",
                "JSON",
                "Notifications",
                "OpenSSLCrypto",
                "WebhookHTTP",
                "HTTPServer",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "DispatcherServiceTests",
            dependencies: [
                "Records",
                "TestSupport",
                "ServiceExtensions",
                "DispatcherService",
                "Kafka",
                "Dispatcher",
                "JSON",
                "Notifications",
                "HTTPServer",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: swiftSettings
        ),
        // The suites that run the built executables (`notification-dispatcher`'s commands, the
        // fuzzer's corpus replay, the benchmarks' smoke runs) as a user would, apart from the
        // tests of the modules: `swift build --build-tests` builds the executables they run.
        .testTarget(
            name: "CommandLineTests",
            dependencies: [
                "ChildProcesses",
                "Records",
                "TestSupport",
                "Dispatcher",
                "DispatcherTools",
                "JSON",
                "Notifications",
                "OpenSSLCrypto",
                "HTTPServer",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
