/// A `serviceExtension` value: `none`, or steps run in order (one step is a chain of one).
public enum ServiceExtensionSetting: Sendable, Hashable {
    /// Explicitly no extension (used by a category to opt out of the app's extension).
    case none
    /// The steps, in order; never empty.
    case chain([ExtensionStep])
}
