public import JSON
import Notifications

/// One step of a service extension: which kind runs, under which name, with which options.
public struct ExtensionStep: Sendable, Hashable {
    /// The registered kind (`rewrite`, `webhook`, or a kind the user registered).
    public var kind: String
    /// The name in reports; defaults to the kind.
    public var name: String
    /// Every other key of the step, handed to the kind's factory.
    public var options: JSONObject
    /// Where the step is written in the configuration, for error messages.
    public var configPath: String

    /// Creates a step.
    public init(kind: String, name: String? = nil, options: JSONObject = JSONObject(), configPath: String = "") {
        self.kind = kind
        self.name = name ?? kind
        self.options = options
        self.configPath = configPath
    }
}
