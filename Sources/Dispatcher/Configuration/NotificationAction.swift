/// An action of a notification category (`UNNotificationAction`, or `UNTextInputNotificationAction`
/// with `textInput`), as declared under `apps[...].categories.NAME.actions` (SEMANTICS section 10).
public struct NotificationAction: Sendable, Hashable {
    /// The text field of a text-input action.
    public struct TextInput: Sendable, Hashable {
        /// The title of the button that sends the text.
        public var buttonTitle: String
        /// The placeholder shown in the empty field.
        public var placeholder: String

        /// Creates a text field.
        public init(buttonTitle: String, placeholder: String) {
            self.buttonTitle = buttonTitle
            self.placeholder = placeholder
        }
    }

    /// The identifier a response names; unique within its category, never one of Apple's two.
    public var id: String
    /// The button's title.
    public var title: String
    /// The action's options, as declared (each once).
    public var options: [ActionOption]
    /// The text field, nil for a plain action.
    public var textInput: TextInput?

    /// Creates an action.
    public init(id: String, title: String, options: [ActionOption] = [], textInput: TextInput? = nil) {
        self.id = id
        self.title = title
        self.options = options
        self.textInput = textInput
    }
}
