/// A notification payload: the whole JSON body, custom keys included exactly, plus a typed view of `aps`.
///
/// `==` is JSON equality of the body. The body and the view are read-only so they cannot drift apart:
/// to change a payload, edit its `json` and validate the result again.
public struct Payload: Sendable, Hashable {
    /// The body and what the rules need to know of it, boxed: a payload is copied into every request and
    /// output, and copying one reference is far cheaper than copying many fields.
    let storage: Storage

    /// The body, exactly as received (custom keys, key order and number spelling kept).
    public var json: JSONObject { storage.json }

    /// The typed view of `aps`, built on each access from the validated body (keep it if used often).
    ///
    /// Built on demand because validation only needs the few facts in `Traits`; carrying the whole view in
    /// every payload cost more than the rest of validation.
    public var aps: APS {
        APS(checked: storage.aps)
    }

    /// The immutable body, its `aps` object and its traits (immutable, hence `Sendable`).
    final class Storage: Sendable {
        let json: JSONObject
        let aps: JSONObject
        let traits: Traits

        /// Boxes a checked body.
        init(json: JSONObject, aps: JSONObject, traits: Traits) {
            self.json = json
            self.aps = aps
            self.traits = traits
        }
    }

    /// The facts of `aps` that classification, push type inference and badge effect read.
    struct Traits: Sendable {
        /// `alert` is present (whatever its text).
        var hasAlert = false
        /// There is alert text (SEMANTICS.md section 2).
        var hasAlertText = false
        /// `badge` is present.
        var hasBadge = false
        /// `badge` is present and zero.
        var badgeIsZero = false
        /// `sound` is present.
        var hasSound = false
        /// `content-available` is 1.
        var contentAvailable = false
        /// `mutable-content` is 1.
        var mutableContent = false
        /// `category`, when present.
        var category: String?
    }

    /// Checks the type rules of SEMANTICS.md section 2 (not the size limit): a JSON object with an `aps`
    /// object whose documented keys have the documented types.
    ///
    /// - Throws: `PayloadError` naming the key path and the value.
    public init(validating json: JSONValue) throws(PayloadError) {
        guard case .object(let body) = json else {
            throw PayloadError(
                keyPath: "",
                message: "The payload must be a JSON object, but it is the \(json.typeName) \(MessageText.quote(json))."
            )
        }
        guard let apsValue = body["aps"] else {
            throw PayloadError(keyPath: "aps", message: "The payload has no aps object.")
        }
        guard case .object(let apsObject) = apsValue else {
            throw .wrongType("aps", apsValue, expected: "an object")
        }
        storage = Storage(json: body, aps: apsObject, traits: try APS.check(apsObject))
    }

    /// The body as compact JSON bytes: no whitespace, UTF-8, `/` not escaped, numbers as written.
    public func serialized() -> [UInt8] {
        var writer = JSONWriter()
        writer.write(object: storage.json)
        return writer.output
    }

    /// JSON equality of the bodies.
    public static func == (lhs: Payload, rhs: Payload) -> Bool { lhs.storage === rhs.storage || lhs.json == rhs.json }

    /// Hashes the body.
    public func hash(into hasher: inout Hasher) { hasher.combine(storage.json) }
}
