import Records
public import JSON
import Synchronization

/// A notification payload: the whole JSON body, custom keys included exactly, plus a typed view of `aps`.
///
/// `==` is JSON equality of the body. The body and the view are read-only so they cannot drift apart:
/// to change a payload, edit its `json` and validate the result again.
public struct Payload: Sendable, Hashable {
    /// The body and what the rules need to know of it, boxed: a payload is copied into every request and
    /// output, and copying one reference is far cheaper than copying many fields.
    let storage: Storage

    /// The body, exactly as received (custom keys, key order and number spelling kept).
    ///
    /// A payload validated from bytes builds this tree on first access, from those bytes: only what
    /// edits or walks the content (service extensions, `explain`, offline tools) pays for it.
    public var json: JSONObject { storage.tree.json }

    /// The typed view of `aps`, built on each access from the validated body (keep it if used often).
    ///
    /// Built on demand because validation only needs the few facts in `Traits`; carrying the whole view in
    /// every payload cost more than the rest of validation.
    public var aps: APS {
        APS(checked: storage.tree.aps)
    }

    /// The body as a tree, and its `aps` object.
    struct Tree: Sendable {
        let json: JSONObject
        let aps: JSONObject
    }

    /// The immutable body (bytes, tree or both) and its traits; the tree is built at most once.
    final class Storage: Sendable {
        /// What the rules read.
        let traits: Traits
        /// The body as received, when the payload was validated from bytes: a view of the
        /// consumed record's buffer, not a copy.
        let bytes: RecordBytes?
        /// How `bytes` stand to what `JSONWriter` writes for the body (``JSONForm``): copied as
        /// they are when compact, else compacted from the text wherever the payload is written.
        let form: JSONForm
        /// The tree, built from `bytes` on first use when not given.
        private let built: Mutex<Tree?>

        /// Boxes a checked tree.
        init(json: JSONObject, aps: JSONObject, traits: Traits) {
            self.traits = traits
            self.bytes = nil
            self.form = .general
            self.built = Mutex(Tree(json: json, aps: aps))
        }

        /// Boxes checked bytes; the tree is built when first asked for.
        init(bytes: RecordBytes, form: JSONForm, traits: Traits) {
            self.traits = traits
            self.bytes = bytes
            self.form = form
            self.built = Mutex(nil)
        }

        /// The compact bytes of the body, when they are at hand as they came.
        var compactBytes: RecordBytes? { form == .compact ? bytes : nil }

        /// The tree, parsed from `bytes` the first time.
        var tree: Tree {
            built.withLock { cached in
                if let cached { return cached }
                let tree = Self.parse(bytes ?? [])
                cached = tree
                return tree
            }
        }

        /// Parses bytes the validator accepted (an `mdm` payload may have no `aps`).
        private static func parse(_ bytes: RecordBytes) -> Tree {
            guard case .object(let json)? = try? JSONValue(parsingPayload: bytes) else {
                // Unreachable: the validator accepts only documents the parser accepts (the
                // equivalence tests in PayloadViewTests hold the scanner to that).
                preconditionFailure("validated payload bytes no longer parse")
            }
            return Tree(json: json, aps: json["aps"]?.objectValue ?? JSONObject())
        }
    }

    /// The facts of `aps` that classification, push type inference and badge effect read.
    package struct Traits: Sendable {
        /// `alert` is present (whatever its text).
        package var hasAlert = false
        /// There is alert text (SEMANTICS.md section 2).
        package var hasAlertText = false
        /// `badge` is present.
        package var hasBadge = false
        /// `badge` is present and zero.
        package var badgeIsZero = false
        /// The integer `badge` holds, held to `Int`'s range, when present (the badge ledger's count
        /// follows it: section 21.3).
        package var badgeNumber = 0
        /// `sound` is present.
        package var hasSound = false
        /// `content-available` is 1.
        package var contentAvailable = false
        /// `mutable-content` is 1.
        package var mutableContent = false
        /// `category`, when present.
        package var category: String?
        /// `interruption-level`, when present.
        package var interruptionLevel: InterruptionLevel?
        /// `content-changed` is true (section 18).
        package var contentChanged = false
        /// The alert object's legacy `show-view` is false: no View button (seed 001).
        package var hidesViewButton = false

        /// No fact yet: what a scan (``Payload/scan(_:into:maxDepth:)``) fills in.
        package init() {}
    }

    /// Checks the type rules of SEMANTICS.md section 2 (not the size limit): a JSON object with an `aps`
    /// object whose documented keys have the documented types.
    ///
    /// - Throws: `PayloadError` naming the key path and the value.
    /// - Parameters:
    ///   - pushType: the `apns-push-type` header's push type, when given: `mdm` needs `mdm` instead
    ///     of `aps`, and `liveactivity` allows loc objects in the alert (with `profile` `modern`).
    ///   - profile: whose rules apply.
    public init(validating json: JSONValue, pushType: PushType? = nil, profile: Profile = .modern) throws(PayloadError) {
        guard case .object(let body) = json else {
            throw PayloadError(
                keyPath: "",
                message: "The payload must be a JSON object, but it is the \(json.typeName) \(MessageText.quote(json))."
            )
        }
        let allowsLocObjects = pushType == .liveactivity && profile == .modern
        if pushType == .mdm {
            // Section 2: an MDM push carries the device's PushMagic; aps is optional and typed when present.
            guard case .string(let magic)? = body["mdm"], !magic.isEmpty else {
                throw PayloadError(keyPath: "mdm", message: "An mdm payload needs mdm, a non-empty string (the PushMagic).")
            }
            guard let apsValue = body["aps"] else {
                storage = Storage(json: body, aps: JSONObject(), traits: Traits())
                return
            }
            guard case .object(let apsObject) = apsValue else { throw .wrongType("aps", apsValue, expected: "an object") }
            storage = Storage(json: body, aps: apsObject, traits: try APS.check(apsObject))
            return
        }
        guard let apsValue = body["aps"] else {
            throw PayloadError(keyPath: "aps", message: "The payload has no aps object.")
        }
        guard case .object(let apsObject) = apsValue else {
            throw .wrongType("aps", apsValue, expected: "an object")
        }
        storage = Storage(json: body, aps: apsObject, traits: try APS.check(apsObject, allowsLocObjects: allowsLocObjects))
    }

    /// The body as compact JSON bytes: no whitespace, UTF-8, `/` not escaped, numbers as written.
    public func serialized() -> [UInt8] {
        if let bytes = storage.compactBytes { return Array(bytes) }
        var writer = JSONWriter(capacity: byteCountHint)
        writer.write(payload: self)
        return writer.finish()
    }

    /// The number of bytes of `serialized()`.
    public var serializedCount: Int {
        storage.compactBytes?.count ?? serialized().count
    }

    /// JSON equality of the bodies.
    public static func == (lhs: Payload, rhs: Payload) -> Bool {
        if lhs.storage === rhs.storage { return true }
        // The same compact bytes are the same JSON; different ones may still be equal (`1` and `1.0`).
        if let left = lhs.storage.compactBytes, let right = rhs.storage.compactBytes, left == right { return true }
        return lhs.json == rhs.json
    }

    /// Hashes the body.
    public func hash(into hasher: inout Hasher) { hasher.combine(json) }
}
