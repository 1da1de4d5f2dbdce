/// A notification payload: the whole JSON body, custom keys included exactly, plus a typed view of `aps`.
///
/// `==` is JSON equality of the body. The body and the view are read-only so they cannot drift apart:
/// to change a payload, edit its `json` and validate the result again.
public struct Payload: Sendable, Hashable {
    /// The body and its view, boxed: a payload is copied into every request and output, and copying one
    /// reference is far cheaper than copying the many fields of the view.
    let storage: Storage

    /// The body, exactly as received (custom keys, key order and number spelling kept).
    public var json: JSONObject { storage.json }
    /// The typed view of `aps`.
    public var aps: APS { storage.aps }

    /// The immutable body and view (immutable, hence `Sendable`).
    final class Storage: Sendable {
        let json: JSONObject
        let aps: APS

        init(json: JSONObject, aps: APS) {
            self.json = json
            self.aps = aps
        }
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
        storage = Storage(json: body, aps: try APS(validating: apsObject))
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
