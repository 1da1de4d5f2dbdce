/// How a valid JSON document's bytes stand to what ``JSONWriter`` writes for the same value, as
/// the validator found them: what ``JSONWriter/appendCompact(json:form:)`` must do to write
/// the value without parsing it into a tree.
public enum JSONForm: Sendable, Hashable {
    /// The bytes are what the writer writes (no whitespace outside strings, only its own
    /// escapes): copied as they are.
    case compact
    /// No object repeats a key or escapes one, and every object has at most
    /// ``JSONScanner/maximumKeys`` keys (``JSONScanner`` checked): whitespace is dropped and
    /// strings' escapes are rewritten the writer's way, in one pass over the bytes.
    case plain
    /// Any other valid document: repeated keys (the first position keeps the last value, as the
    /// parser builds the tree) and escaped keys are resolved object by object.
    case general
}
