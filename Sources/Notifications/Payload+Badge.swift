import JSON
import Records

extension Payload {
    /// The payload with `aps.badge` set to `badge` (it has none: the caller checked), as a badge
    /// ledger's increment writes it before the rules read the payload (SEMANTICS section 21.2):
    /// the compact form, the badge the last key of `aps`.
    package func withBadge(_ badge: Int) -> Payload {
        var writer = JSONWriter(capacity: byteCountHint + 32)
        writer.write(payload: self)
        writer.insert(member: "badge", integer: badge, intoObject: "aps", writtenFrom: 0)
        var traits = storage.traits
        traits.hasBadge = true
        traits.badgeIsZero = badge == 0
        traits.badgeNumber = badge
        return Payload(validatedBytes: RecordBytes(writer.finish()), form: .compact, traits: traits)
    }
}
