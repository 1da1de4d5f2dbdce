import Dispatcher
import Foundation
import JSON
import Notifications
import ServiceExtensions
import Testing
import TestSupport

/// The configuration: defaults, environment overrides, apps, and every kind of error with its key path.
@Suite("Configuration")
struct ConfigurationTests {
    @Test("an empty file is every default")
    func defaults() throws {
        let configuration = try Configuration(yaml: "")
        #expect(configuration.kafka.bootstrapServers == "localhost:9092")
        #expect(configuration.kafka.groupId == "notification-dispatcher")
        #expect(configuration.kafka.properties.isEmpty)
        #expect(configuration.topics.requests == "notifications.requests")
        #expect(configuration.topics.deliveries == "notifications.deliveries")
        #expect(configuration.topics.launches == "notifications.launches")
        #expect(configuration.topics.deadLetter == "notifications.dead-letter")
        #expect(configuration.topics.metrics == "notifications.metrics")
        #expect(configuration.topics.appStates == nil)
        #expect(configuration.dispatch.profile == .modern)
        #expect(configuration.dispatch.deadline == .seconds(30))
        #expect(configuration.dispatch.expiryGrace == .seconds(2))
        #expect(configuration.dispatch.maxInFlight == 10_000)
        #expect(configuration.dispatch.ordering == .key)
        #expect(configuration.dispatch.maxBufferedBytes == 64 * 1024 * 1024)
        #expect(configuration.dispatch.resumeRatio == 0.5)
        #expect(configuration.dispatch.commitInterval == .seconds(1))
        #expect(configuration.apps.isEmpty)
        #expect(configuration.metrics.interval == .seconds(5))
        #expect(configuration.metrics.workerId == nil)
        #expect(configuration.metrics.prefix == "notification_dispatcher")
        #expect(configuration.http.port == 9090)
        #expect(configuration.http.host == "0.0.0.0")
        #expect(configuration.http.livenessLimit == .seconds(60))
        #expect(configuration == Configuration())
    }

    @Test("every key is read from the file")
    func fullFile() throws {
        let configuration = try Configuration(
            yaml: """
                kafka:
                  bootstrapServers: broker-1:9092,broker-2:9092
                  groupId: team
                  properties: {session.timeout.ms: 6000, compression.type: lz4, client.id: me}
                topics: {requests: r, deliveries: d, launches: l, deadLetter: x, metrics: m, appStates: s}
                dispatch:
                  profile: legacy
                  deadline: 1.5s
                  expiryGrace: 0ms
                  maxInFlight: 10
                  ordering: partition
                  maxBufferedBytes: 1000
                  resumeRatio: 0.25
                  commitInterval: 250ms
                metrics: {interval: 1m, workerId: w-1, prefix: nd}
                http: {host: 127.0.0.1, port: 0, livenessLimit: 1h}
                apps:
                  com.example.app:
                    appDelegate: legacy
                    defaultAppState: forceQuit
                    deadline: 5s
                    serviceExtension:
                      - kind: rewrite
                        set: {aps.thread-id: t}
                      - {kind: rewrite, name: second, remove: [x]}
                    categories:
                      A: {serviceExtension: none, deadline: 2s}
                      B: {deadline: 3s}
                    contentExtensions:
                      - name: V
                        categories: A
                        initialContentSizeRatio: 2
                        defaultContentHidden: true
                        overridesDefaultTitle: true
                        userInteractionEnabled: true
                """)
        #expect(configuration.kafka.bootstrapServers == "broker-1:9092,broker-2:9092")
        #expect(configuration.kafka.groupId == "team")
        #expect(configuration.kafka.properties == ["session.timeout.ms": "6000", "compression.type": "lz4", "client.id": "me"])
        #expect(configuration.topics.appStates == "s")
        #expect(configuration.topics.deadLetter == "x")
        #expect(configuration.dispatch.profile == .legacy)
        #expect(configuration.dispatch.deadline == .milliseconds(1500))
        #expect(configuration.dispatch.expiryGrace == .zero)
        #expect(configuration.dispatch.ordering == .partition)
        #expect(configuration.dispatch.resumeRatio == 0.25)
        #expect(configuration.dispatch.commitInterval == .milliseconds(250))
        #expect(configuration.metrics.interval == .seconds(60))
        #expect(configuration.metrics.workerId == "w-1")
        #expect(configuration.http.port == 0)
        #expect(configuration.http.livenessLimit == .seconds(3600))
        let app = try #require(configuration.apps["com.example.app"])
        #expect(app.appDelegate == .legacy)
        #expect(app.defaultAppState == .forceQuit)
        #expect(app.deadline == .seconds(5))
        guard case .chain(let steps) = app.serviceExtension else {
            Issue.record("expected a chain")
            return
        }
        #expect(steps.map(\.name) == ["rewrite", "second"])
        #expect(steps[0].options == ["set": ["aps.thread-id": "t"]])
        #expect(steps[1].configPath == #"apps["com.example.app"].serviceExtension[1]"#)
        #expect(app.categories["A"] == CategorySettings(serviceExtension: ServiceExtensionSetting.none, deadline: .seconds(2)))
        #expect(app.categories["B"] == CategorySettings(serviceExtension: nil, deadline: .seconds(3)))
        #expect(
            app.contentExtensions == [
                ContentExtensionSettings(
                    name: "V", categories: ["A"], initialContentSizeRatio: 2, defaultContentHidden: true,
                    overridesDefaultTitle: true, userInteractionEnabled: true)
            ])
    }

    @Test("environment variables override every scalar, also when the file lacks the key")
    func environmentOverrides() throws {
        let environment = [
            "NOTIFICATION_DISPATCHER_KAFKA_BOOTSTRAP_SERVERS": "env:9092",
            "NOTIFICATION_DISPATCHER_KAFKA_GROUP_ID": "env-group",
            "NOTIFICATION_DISPATCHER_TOPICS_DEAD_LETTER": "env.dlq",
            "NOTIFICATION_DISPATCHER_TOPICS_APP_STATES": "env.states",
            "NOTIFICATION_DISPATCHER_DISPATCH_DEADLINE": "750ms",
            "NOTIFICATION_DISPATCHER_DISPATCH_PROFILE": "legacy",
            "NOTIFICATION_DISPATCHER_DISPATCH_MAX_IN_FLIGHT": "42",
            "NOTIFICATION_DISPATCHER_DISPATCH_RESUME_RATIO": "0.75",
            "NOTIFICATION_DISPATCHER_DISPATCH_ORDERING": "unordered",
            "NOTIFICATION_DISPATCHER_METRICS_WORKER_ID": "env-worker",
            "NOTIFICATION_DISPATCHER_HTTP_PORT": "8081",
            "NOTIFICATION_DISPATCHER_HTTP_LIVENESS_LIMIT": "2m",
        ]
        let configuration = try Configuration(
            yaml: "kafka: {groupId: file-group}\ndispatch: {deadline: 10s}", environment: environment)
        #expect(configuration.kafka.bootstrapServers == "env:9092")
        #expect(configuration.kafka.groupId == "env-group")
        #expect(configuration.topics.deadLetter == "env.dlq")
        #expect(configuration.topics.appStates == "env.states")
        #expect(configuration.dispatch.deadline == .milliseconds(750))
        #expect(configuration.dispatch.profile == .legacy)
        #expect(configuration.dispatch.maxInFlight == 42)
        #expect(configuration.dispatch.resumeRatio == 0.75)
        #expect(configuration.dispatch.ordering == .unordered)
        #expect(configuration.metrics.workerId == "env-worker")
        #expect(configuration.http.port == 8081)
        #expect(configuration.http.livenessLimit == .seconds(120))
    }

    @Test("a bad environment value names the variable and the key path")
    func environmentError() throws {
        let error = #expect(throws: ConfigurationError.self) {
            try Configuration(yaml: "", environment: ["NOTIFICATION_DISPATCHER_DISPATCH_DEADLINE": "30"])
        }
        #expect(error?.code == .wrongType)
        #expect(error?.path == "NOTIFICATION_DISPATCHER_DISPATCH_DEADLINE (dispatch.deadline)")
        #expect(error?.value == "30")
    }

    @Test("the file is read from disk; a missing file is an unreadableFile error")
    func fromFile() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("nd-config-\(UUID().uuidString).yaml")
        try "http: {port: 1234}".write(to: url, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: url) }
        #expect(try Configuration(contentsOfFile: url.path, environment: [:]).http.port == 1234)
        let error = #expect(throws: ConfigurationError.self) {
            try Configuration(contentsOfFile: url.path + ".missing", environment: [:])
        }
        #expect(error?.code == .unreadableFile)
    }

    /// A configuration mistake, the error code and the key path (and value) the message must name.
    struct Mistake: Sendable, CustomTestStringConvertible {
        let yaml: String
        let code: ConfigurationError.Code
        let path: String
        let value: String?
        var testDescription: String { "\(code.rawValue) at \(path)" }
    }

    static let mistakes: [Mistake] = [
        Mistake(yaml: "kafka: [1]: x: y", code: .syntax, path: "(file)", value: nil),
        Mistake(yaml: "kafkaa: {}", code: .unknownKey, path: "kafkaa", value: "kafkaa"),
        Mistake(yaml: "dispatch: {deadlien: 3s}", code: .unknownKey, path: "dispatch.deadlien", value: "deadlien"),
        Mistake(yaml: "dispatch: {deadline: 30}", code: .wrongType, path: "dispatch.deadline", value: "30"),
        Mistake(yaml: "dispatch: {deadline: soon}", code: .wrongType, path: "dispatch.deadline", value: "\"soon\""),
        Mistake(yaml: "dispatch: {deadline: 0s}", code: .invalidValue, path: "dispatch.deadline", value: "\"0s\""),
        Mistake(yaml: "dispatch: {profile: ancient}", code: .invalidValue, path: "dispatch.profile", value: "\"ancient\""),
        Mistake(yaml: "dispatch: {maxInFlight: many}", code: .wrongType, path: "dispatch.maxInFlight", value: "\"many\""),
        Mistake(yaml: "dispatch: {maxInFlight: 0}", code: .invalidValue, path: "dispatch.maxInFlight", value: "0"),
        Mistake(yaml: "dispatch: {resumeRatio: 1.5}", code: .invalidValue, path: "dispatch.resumeRatio", value: "1.5"),
        Mistake(yaml: "http: {port: 70000}", code: .invalidValue, path: "http.port", value: "70000"),
        Mistake(yaml: "http: {port: [1]}", code: .wrongType, path: "http.port", value: nil),
        Mistake(yaml: "topics: {requests: 12}", code: .wrongType, path: "topics.requests", value: "12"),
        Mistake(yaml: "topics: {requests: ''}", code: .invalidValue, path: "topics.requests", value: "\"\""),
        Mistake(yaml: "kafka: {properties: [a]}", code: .wrongType, path: "kafka.properties", value: nil),
        Mistake(yaml: "apps: [a]", code: .wrongType, path: "apps", value: nil),
        Mistake(
            yaml: "apps: {com.example.app: {appDelegate: sometimes}}", code: .invalidValue,
            path: #"apps["com.example.app"].appDelegate"#, value: "\"sometimes\""),
        Mistake(
            yaml: "apps: {com.example.app: {defaultAppState: asleep}}", code: .invalidValue,
            path: #"apps["com.example.app"].defaultAppState"#, value: "\"asleep\""),
        Mistake(
            yaml: "apps: {com.example.app: {colour: red}}", code: .unknownKey, path: #"apps["com.example.app"].colour"#,
            value: "colour"),
        Mistake(
            yaml: "apps: {com.example.app: {categories: {NEWS: {deadline: 30}}}}", code: .wrongType,
            path: #"apps["com.example.app"].categories.NEWS.deadline"#, value: "30"),
        Mistake(
            yaml: "apps: {com.example.app: {categories: {breaking.news: {timeout: 1s}}}}", code: .unknownKey,
            path: #"apps["com.example.app"].categories["breaking.news"].timeout"#, value: "timeout"),
        Mistake(
            yaml: "apps: {com.example.app: {serviceExtension: {name: x}}}", code: .missingValue,
            path: #"apps["com.example.app"].serviceExtension.kind"#, value: nil),
        Mistake(
            yaml: "apps: {com.example.app: {serviceExtension: []}}", code: .invalidValue,
            path: #"apps["com.example.app"].serviceExtension"#, value: "[]"),
        Mistake(
            yaml: "apps: {com.example.app: {serviceExtension: always}}", code: .wrongType,
            path: #"apps["com.example.app"].serviceExtension"#, value: "always"),
        Mistake(
            yaml: "apps: {com.example.app: {contentExtensions: [{name: V, categories: A}]}}", code: .missingValue,
            path: #"apps["com.example.app"].contentExtensions[0].initialContentSizeRatio"#, value: nil),
        Mistake(
            yaml: "apps: {com.example.app: {contentExtensions: [{name: V, categories: A, initialContentSizeRatio: 0}]}}",
            code: .invalidValue, path: #"apps["com.example.app"].contentExtensions[0].initialContentSizeRatio"#,
            value: "0"),
        Mistake(
            yaml: "apps: {com.example.app: {contentExtensions: [{name: V, initialContentSizeRatio: 1}]}}",
            code: .missingValue, path: #"apps["com.example.app"].contentExtensions[0].categories"#, value: nil),
        Mistake(
            yaml: """
                apps:
                  com.example.app:
                    contentExtensions:
                      - {name: V, categories: [A, NEWS], initialContentSizeRatio: 1}
                      - {name: W, categories: NEWS, initialContentSizeRatio: 1}
                """,
            code: .duplicateCategory, path: #"apps["com.example.app"].contentExtensions[1].categories"#, value: "NEWS"),
        Mistake(
            yaml: "apps: {com.example.app: {contentExtensions: [{name: V, categories: A, initialContentSizeRatio: 1, hidden: true}]}}",
            code: .unknownKey, path: #"apps["com.example.app"].contentExtensions[0].hidden"#, value: "hidden"),
        Mistake(
            yaml: "apps: {com.example.app: {contentExtensions: [{name: V, categories: A, initialContentSizeRatio: 1, defaultContentHidden: maybe}]}}",
            code: .wrongType, path: #"apps["com.example.app"].contentExtensions[0].defaultContentHidden"#,
            value: "\"maybe\""),
    ]

    @Test("every mistake stops loading with its code, key path and value", arguments: mistakes)
    func mistake(_ mistake: Mistake) {
        let error = #expect(throws: ConfigurationError.self) {
            try Configuration(yaml: mistake.yaml)
        }
        #expect(error?.code == mistake.code)
        #expect(error?.path == mistake.path)
        if let value = mistake.value {
            #expect(error?.value == value)
            #expect(error?.description.contains(value) == true)
        }
        #expect(error?.description.hasPrefix(mistake.path) == true)
    }

    /// An extension mistake found when the dispatcher is built against the registry.
    static let extensionMistakes: [Mistake] = [
        Mistake(
            yaml: "apps: {com.example.app: {serviceExtension: {kind: teleport}}}", code: .unknownExtensionKind,
            path: #"apps["com.example.app"].serviceExtension.kind"#, value: "teleport"),
        Mistake(
            yaml: "apps: {com.example.app: {categories: {A: {serviceExtension: [{kind: rewrite}, {kind: rewrite, sett: {}}]}}}}",
            code: .invalidExtensionOptions,
            path: #"apps["com.example.app"].categories.A.serviceExtension[1].sett"#, value: "sett"),
        Mistake(
            yaml: "apps: {com.example.app: {serviceExtension: {kind: rewrite, set: [a]}}}", code: .invalidExtensionOptions,
            path: #"apps["com.example.app"].serviceExtension.set"#, value: #"["a"]"#),
        Mistake(
            yaml: "apps: {com.example.app: {serviceExtension: {kind: rewrite, remove: [aps..x]}}}",
            code: .invalidExtensionOptions, path: #"apps["com.example.app"].serviceExtension.remove"#,
            value: #""aps..x""#),
        Mistake(
            yaml: "apps: {com.example.app: {serviceExtension: {kind: webhook}}}", code: .invalidExtensionOptions,
            path: #"apps["com.example.app"].serviceExtension.url"#, value: nil),
        Mistake(
            yaml: "apps: {com.example.app: {serviceExtension: {kind: webhook, url: 'ftp://x'}}}",
            code: .invalidExtensionOptions, path: #"apps["com.example.app"].serviceExtension.url"#, value: "ftp://x"),
        Mistake(
            yaml: "apps: {com.example.app: {serviceExtension: {kind: webhook, url: 'http://localhost:1', headers: {X: [1]}}}}",
            code: .invalidExtensionOptions, path: #"apps["com.example.app"].serviceExtension.headers"#, value: "[1]"),
    ]

    @Test("unknown extension kinds and bad options stop the dispatcher's construction", arguments: extensionMistakes)
    func extensionMistake(_ mistake: Mistake) async throws {
        let configuration = try Configuration(yaml: mistake.yaml)
        try await BuiltInExtensions.withRegistry { registry in
            let error = #expect(throws: ConfigurationError.self) {
                try Dispatcher(configuration: configuration, registry: registry)
            }
            #expect(error?.code == mistake.code)
            #expect(error?.path == mistake.path)
            if let value = mistake.value { #expect(error?.value == value) }
        }
    }

    @Test("the shipped Config/dispatcher.yaml and examples load and build with the built-in kinds")
    func shippedConfigurations() async throws {
        let root = BuiltBinary.packageRoot()
        for file in ["Config/dispatcher.yaml", "Config/examples/webhook.yaml", "Config/examples/legacy.yaml"] {
            let configuration = try Configuration(
                contentsOfFile: root.appendingPathComponent(file).path, environment: [:])
            try await BuiltInExtensions.withRegistry { registry in
                _ = try Dispatcher(configuration: configuration, registry: registry)
            }
        }
    }
}
