/// The extension kinds a dispatcher can run: kind name → factory that checks a step's options once
/// at start-up and returns a maker of per-request instances.
///
/// Built-in kinds are registered by `ServiceExtensions` (`BuiltInExtensions.register(in:webhookClient:)`);
/// applications register their own Swift extensions the same way:
/// ```swift
/// var registry = ExtensionRegistry()
/// registry.register(kind: "greeting") { options in
///     let greeting = try options.string("greeting")
///     return { GreetingExtension(greeting: greeting) }
/// }
/// ```
public struct ExtensionRegistry: Sendable {
    /// Makes one fresh extension instance (one per request and step, as Apple does).
    public typealias Maker = @Sendable () -> any ServiceExtension
    /// Checks a step's options and returns the maker of its instances.
    public typealias Factory = @Sendable (ExtensionOptions) throws(ExtensionOptionsError) -> Maker

    /// The factories by kind.
    private var factories: [String: Factory] = [:]

    /// An empty registry.
    public init() {}

    /// Registers (or replaces) the factory of `kind`.
    public mutating func register(kind: String, factory: @escaping Factory) {
        factories[kind] = factory
    }

    /// The registered kinds, sorted.
    public var kinds: [String] { factories.keys.sorted() }

    /// The maker for `step`, checking its kind and options.
    /// - Throws: `ConfigurationError` (`unknownExtensionKind`, `invalidExtensionOptions`) naming the step's key path.
    package func maker(for step: ExtensionStep) throws(ConfigurationError) -> Maker {
        guard let factory = factories[step.kind] else {
            throw ConfigurationError(
                .unknownExtensionKind, at: ConfigPath.render(step.configPath, appending: "kind"), value: step.kind,
                "unknown extension kind; registered kinds: \(kinds.joined(separator: ", "))")
        }
        do {
            return try factory(ExtensionOptions(step.options))
        } catch {
            let path = error.key.map { ConfigPath.render(step.configPath, appending: $0) } ?? step.configPath
            throw ConfigurationError(.invalidExtensionOptions, at: path, value: error.value, error.message)
        }
    }
}
