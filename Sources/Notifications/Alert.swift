public import JSON

/// The `aps.alert` value: a plain string, or an object of its documented keys.
public enum Alert: Sendable, Hashable {
    /// The alert's body as a string.
    case text(String)
    /// The alert object.
    case fields(AlertFields)

    /// Whether there is text to show: a non-empty string, or a non-empty title, subtitle, body or localisation key.
    public var hasText: Bool {
        switch self {
        case .text(let text): !text.isEmpty
        case .fields(let fields): fields.hasText
        }
    }
}

/// The keys of an alert object, typed; unknown keys are kept in `otherKeys`.
public struct AlertFields: Sendable, Hashable {
    /// `title`.
    public var title: String?
    /// `subtitle`.
    public var subtitle: String?
    /// `body`.
    public var body: String?
    /// `launch-image`.
    public var launchImage: String?
    /// `title-loc-key`.
    public var titleLocKey: String?
    /// `title-loc-args`.
    public var titleLocArgs: [String]?
    /// `subtitle-loc-key`.
    public var subtitleLocKey: String?
    /// `subtitle-loc-args`.
    public var subtitleLocArgs: [String]?
    /// `loc-key`.
    public var locKey: String?
    /// `loc-args`.
    public var locArgs: [String]?
    /// The legacy `show-view`.
    public var showView: Bool?
    /// The legacy `action-loc-key`: a localisation key, or null (no action button).
    public var actionLocKey: ActionLocKey?
    /// Keys not documented, kept as they were.
    public var otherKeys: JSONObject = JSONObject()

    /// Makes empty fields.
    package init() {}

    /// Whether a title, subtitle, body or one of their localisation keys is non-empty.
    public var hasText: Bool {
        for text in [title, subtitle, body, titleLocKey, subtitleLocKey, locKey] {
            if let text, !text.isEmpty { return true }
        }
        return false
    }
}

/// The legacy `action-loc-key`: a key naming the action button, or null to show only a dismiss button.
public enum ActionLocKey: Sendable, Hashable {
    /// The localisation key of the action button's title.
    case key(String)
    /// `null`: no action button.
    case none
}
