public import Foundation
import Notifications
import Yams

extension Configuration {
    /// The prefix of every environment variable that overrides a setting.
    package static let environmentPrefix = "NOTIFICATION_DISPATCHER_"

    /// The top-level keys of the file.
    private static let sections = ["kafka", "topics", "dispatch", "apps", "metrics", "http"]

    /// Loads the YAML file at `path`, then applies the environment's overrides.
    /// - Throws: `ConfigurationError` naming the key path and value of the first mistake.
    public init(
        contentsOfFile path: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ConfigurationError) {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            // A plain sentence: Foundation's own description (`Error Domain=NSCocoaErrorDomain
            // Code=260 ...`) tells a person nothing more.
            var isFolder: ObjCBool = false
            let reason =
                !FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) ? "does not exist"
                : isFolder.boolValue ? "is a folder, not a file" : "cannot be read as UTF-8 text (check its permissions and encoding)"
            throw ConfigurationError(.unreadableFile, at: path, "the configuration file \(reason)")
        }
        try self.init(yaml: text, environment: environment)
    }

    /// Parses `yaml` (an empty text is every default), then applies the environment's overrides.
    /// - Throws: `ConfigurationError` naming the key path and value of the first mistake.
    public init(yaml: String, environment: [String: String] = [:]) throws(ConfigurationError) {
        let root: Node?
        do {
            root = try Yams.compose(yaml: yaml)
        } catch {
            throw ConfigurationError(.syntax, at: "(file)", "not valid YAML: \(error)")
        }
        var file = try ConfigMapping(root, at: .root)
        self.init()
        kafka = try Self.kafka(file.node("kafka"), environment)
        topics = try Self.topics(file.node("topics"), environment)
        dispatch = try Self.dispatch(file.node("dispatch"), environment)
        metrics = try Self.metrics(file.node("metrics"), environment)
        http = try Self.http(file.node("http"), environment)
        apps = try AppSettingsReader.apps(file.node("apps"), at: ConfigPath.root.appending("apps"))
        try file.rejectUnknownKeys(allowed: Self.sections)
        try checkLivenessLimit()
    }

    /// The longest deadline any request may get: `dispatch.deadline`, or an app's or category's own.
    package var longestDeadline: Duration {
        apps.values.reduce(dispatch.deadline) { longest, app in
            let categories = app.categories.values.compactMap(\.deadline)
            return ([longest] + [app.deadline].compactMap { $0 } + categories).max()!
        }
    }

    /// Refuses a liveness limit that a healthy worker can exceed: while every record in flight
    /// waits on its extension (intake held, nothing finishing), the worker shows no progress for up
    /// to the longest deadline plus the expiry grace, and must not be restarted for it.
    private func checkLivenessLimit() throws(ConfigurationError) {
        let busiest = longestDeadline + dispatch.expiryGrace
        guard http.livenessLimit > busiest else {
            throw ConfigurationError(
                .invalidValue, at: "http.livenessLimit", value: DurationText.spell(http.livenessLimit),
                "must be longer than the longest deadline plus dispatch.expiryGrace (\(DurationText.spell(busiest))): "
                    + "a worker whose records all wait on their extensions makes no progress for that long")
        }
    }

    /// A section reader whose scalars the environment can override.
    private static func section(
        _ name: String, _ node: Node?, _ environment: [String: String]
    ) throws(ConfigurationError) -> ConfigMapping {
        try ConfigMapping(
            node, at: ConfigPath.root.appending(name), environment: environment,
            environmentPrefix: environmentPrefix + ConfigMapping.upperSnakeCase(name) + "_")
    }

    private static func kafka(_ node: Node?, _ environment: [String: String]) throws(ConfigurationError) -> KafkaSettings {
        var reader = try section("kafka", node, environment)
        var settings = KafkaSettings()
        if let value = try reader.scalar("bootstrapServers") { settings.bootstrapServers = try value.nonEmptyString() }
        if let value = try reader.scalar("groupId") { settings.groupId = try value.nonEmptyString() }
        if let value = try reader.scalar("maxMessageBytes") {
            settings.maxMessageBytes = try value.int(in: KafkaSettings.maxMessageBytesRange)
        }
        let propertiesPath = reader.path.appending("properties")
        var properties = try ConfigMapping(reader.node("properties"), at: propertiesPath)
        for key in properties.keys {
            // librdkafka takes every property as text, so numbers and booleans are passed as written.
            if let value = try properties.scalar(key) {
                try refuseReserved(key, at: "\(propertiesPath.appending(key))", value: value.text)
                settings.properties[key] = value.text
            }
        }
        // Secrets (SASL passwords, TLS keys) belong in the environment, not in the file.
        for (name, property) in propertiesFromEnvironment(environment) {
            let value = environment[name] ?? ""
            try refuseReserved(property, at: "\(name) (\(propertiesPath.appending(property)))", value: value)
            settings.properties[property] = value
        }
        try reader.rejectUnknownKeys(allowed: ["bootstrapServers", "groupId", "maxMessageBytes", "properties"])
        return settings
    }

    /// The prefix of the environment variables that set `kafka.properties` entries.
    package static let kafkaPropertiesPrefix = environmentPrefix + "KAFKA_PROPERTIES_"

    /// The `kafka.properties` entries the environment sets, by variable name: the rest of the name
    /// after ``kafkaPropertiesPrefix``, lowercased, `_` read as `.` and `__` as `_`
    /// (`..._SASL_PASSWORD` is `sasl.password`).
    static func propertiesFromEnvironment(_ environment: [String: String]) -> [(variable: String, property: String)] {
        environment.keys.filter { $0.hasPrefix(kafkaPropertiesPrefix) && $0.count > kafkaPropertiesPrefix.count }
            .sorted()
            .map { variable in
                let spelled = variable.dropFirst(kafkaPropertiesPrefix.count).lowercased()
                let property = spelled.split(separator: "__", omittingEmptySubsequences: false)
                    .map { $0.replacingOccurrences(of: "_", with: ".") }
                    .joined(separator: "_")
                return (variable, property)
            }
    }

    /// Refuses a librdkafka property the worker sets itself (``KafkaSettings/reservedProperties``).
    private static func refuseReserved(_ property: String, at path: String, value: String) throws(ConfigurationError) {
        guard let why = KafkaSettings.reservedProperties[property] else { return }
        throw ConfigurationError(.invalidValue, at: path, value: value, "\(property) cannot be set here: \(why)")
    }

    private static func topics(_ node: Node?, _ environment: [String: String]) throws(ConfigurationError) -> TopicSettings {
        var reader = try section("topics", node, environment)
        var settings = TopicSettings()
        if let value = try reader.scalar("requests") { settings.requests = try value.nonEmptyString() }
        if let value = try reader.scalar("deliveries") { settings.deliveries = try value.nonEmptyString() }
        if let value = try reader.scalar("launches") { settings.launches = try value.nonEmptyString() }
        if let value = try reader.scalar("deadLetter") { settings.deadLetter = try value.nonEmptyString() }
        if let value = try reader.scalar("metrics") { settings.metrics = try value.nonEmptyString() }
        if let value = try reader.scalar("responses") { settings.responses = try value.nonEmptyString() }
        if let value = try reader.scalar("actions") { settings.actions = try value.nonEmptyString() }
        if let value = try reader.scalar("appStates") {
            let name = try value.string()
            settings.appStates = name.isEmpty ? nil : name
        }
        if let value = try reader.scalar("devices") {
            let name = try value.string()
            settings.devices = name.isEmpty ? nil : name
        }
        if let value = try reader.scalar("channels") { settings.channels = try value.nonEmptyString() }
        if let value = try reader.scalar("activities") { settings.activities = try value.nonEmptyString() }
        if let value = try reader.scalar("stored") { settings.stored = try value.nonEmptyString() }
        if let value = try reader.scalar("feedback") { settings.feedback = try value.nonEmptyString() }
        if let value = try reader.scalar("activityRepartition") { settings.activityRepartition = try value.nonEmptyString() }
        if let value = try reader.scalar("badges") { settings.badges = try value.nonEmptyString() }
        try reader.rejectUnknownKeys(allowed: [
            "requests", "deliveries", "launches", "deadLetter", "metrics", "responses", "actions", "appStates",
            "devices", "channels", "activities", "stored", "feedback", "activityRepartition", "badges",
        ])
        return settings
    }

    private static func dispatch(_ node: Node?, _ environment: [String: String]) throws(ConfigurationError) -> DispatchSettings {
        var reader = try section("dispatch", node, environment)
        var settings = DispatchSettings()
        if let value = try reader.scalar("profile") { settings.profile = try value.choice(Profile.self) }
        if let value = try reader.scalar("deadline") {
            settings.deadline = try value.duration(maximum: DispatchSettings.longestDeadline)
        }
        if let value = try reader.scalar("expiryGrace") {
            settings.expiryGrace = try value.duration(allowZero: true, maximum: DispatchSettings.longestExpiryGrace)
        }
        if let value = try reader.scalar("extensionMemoryLimit") {
            settings.extensionMemoryLimit = try value.byteSize(maximum: DispatchSettings.largestExtensionMemoryLimit)
        }
        if let value = try reader.scalar("maxInFlight") { settings.maxInFlight = try value.int(in: 1...10_000_000) }
        if let value = try reader.scalar("ordering") { settings.ordering = try value.choice(OrderingMode.self) }
        if let value = try reader.scalar("guarantee") { settings.guarantee = try value.choice(DeliveryGuarantee.self) }
        if let value = try reader.scalar("maxBufferedBytes") { settings.maxBufferedBytes = try value.int(in: 1...Int.max) }
        if let value = try reader.scalar("resumeRatio") {
            let ratio = try value.double()
            guard ratio > 0, ratio <= 1 else { throw value.error(.invalidValue, "must be above 0 and at most 1") }
            settings.resumeRatio = ratio
        }
        if let value = try reader.scalar("commitInterval") { settings.commitInterval = try value.duration() }
        if let value = try reader.scalar("outputRetryLimit") { settings.outputRetryLimit = try value.duration() }
        if let value = try reader.scalar("stalledPartitionLimit") { settings.stalledPartitionLimit = try value.duration() }
        if let value = try reader.scalar("restoreLimit") { settings.restoreLimit = try value.duration() }
        if let value = try reader.scalar("environment") { settings.environment = try value.choice(APNsEnvironment.self) }
        if let value = try reader.scalar("storagePeriod") {
            settings.storagePeriod = try value.duration(maximum: DispatchSettings.longestStoragePeriod)
        }
        settings.tooManyRequests = try tooManyRequests(reader.node("tooManyRequests"), under: reader.path, environment)
        settings.stateLimits = try stateLimits(reader.node("stateLimits"), under: reader.path, environment)
        try reader.rejectUnknownKeys(allowed: [
            "profile", "deadline", "expiryGrace", "extensionMemoryLimit", "maxInFlight", "ordering", "maxBufferedBytes", "resumeRatio",
            "commitInterval", "outputRetryLimit", "stalledPartitionLimit", "environment", "storagePeriod", "tooManyRequests",
            "guarantee", "stateLimits", "restoreLimit",
        ])
        return settings
    }

    /// `dispatch.stateLimits`: `{activities: N, stored: N, badges: N}`, positive integers, each
    /// 1,000,000 when absent (or set from `..._DISPATCH_STATE_LIMITS_ACTIVITIES`, `..._STORED` and
    /// `..._BADGES`).
    private static func stateLimits(
        _ node: Node?, under dispatch: ConfigPath, _ environment: [String: String]
    ) throws(ConfigurationError) -> StateLimits {
        var reader = try ConfigMapping(
            node, at: dispatch.appending("stateLimits"), environment: environment,
            environmentPrefix: environmentPrefix + "DISPATCH_STATE_LIMITS_")
        var limits = StateLimits()
        if let value = try reader.scalar("activities") { limits.activities = try value.int(in: 1...Int(Int32.max)) }
        if let value = try reader.scalar("stored") { limits.stored = try value.int(in: 1...Int(Int32.max)) }
        if let value = try reader.scalar("badges") { limits.badges = try value.int(in: 1...Int(Int32.max)) }
        try reader.rejectUnknownKeys(allowed: ["activities", "stored", "badges"])
        return limits
    }

    /// `dispatch.tooManyRequests`: `{limit: N, window: DURATION}`, both required when the mapping is
    /// given (or set from `..._DISPATCH_TOO_MANY_REQUESTS_LIMIT` and `..._WINDOW`); nil when absent.
    private static func tooManyRequests(
        _ node: Node?, under dispatch: ConfigPath, _ environment: [String: String]
    ) throws(ConfigurationError) -> RequestRateLimit? {
        let path = dispatch.appending("tooManyRequests")
        var reader = try ConfigMapping(
            node, at: path, environment: environment,
            environmentPrefix: environmentPrefix + "DISPATCH_TOO_MANY_REQUESTS_")
        let limit = try reader.scalar("limit")
        let window = try reader.scalar("window")
        try reader.rejectUnknownKeys(allowed: ["limit", "window"])
        switch (limit, window) {
        case (nil, nil):
            return nil
        case (let limit?, let window?):
            return RequestRateLimit(
                limit: try limit.int(in: 1...Int(Int32.max)),
                window: try window.duration(maximum: DispatchSettings.longestStoragePeriod))
        case (nil, _):
            throw ConfigurationError(.missingValue, at: path.appending("limit").description, "a value is required (a positive integer)")
        case (_, nil):
            throw ConfigurationError(.missingValue, at: path.appending("window").description, "a value is required (a duration, e.g. 1m)")
        }
    }

    private static func metrics(_ node: Node?, _ environment: [String: String]) throws(ConfigurationError) -> MetricsSettings {
        var reader = try section("metrics", node, environment)
        var settings = MetricsSettings()
        if let value = try reader.scalar("interval") { settings.interval = try value.duration() }
        if let value = try reader.scalar("workerId") {
            let name = try value.string()
            settings.workerId = name.isEmpty ? nil : name
        }
        if let value = try reader.scalar("prefix") { settings.prefix = try value.nonEmptyString() }
        try reader.rejectUnknownKeys(allowed: ["interval", "workerId", "prefix"])
        return settings
    }

    private static func http(_ node: Node?, _ environment: [String: String]) throws(ConfigurationError) -> HTTPSettings {
        var reader = try section("http", node, environment)
        var settings = HTTPSettings()
        if let value = try reader.scalar("host") { settings.host = try value.nonEmptyString() }
        if let value = try reader.scalar("port") { settings.port = try value.int(in: 0...65_535) }
        if let value = try reader.scalar("livenessLimit") { settings.livenessLimit = try value.duration() }
        try reader.rejectUnknownKeys(allowed: ["host", "port", "livenessLimit"])
        return settings
    }
}
