import JSON
import Notifications

extension JSONObject {
    /// Merges `other` into this object: where both hold an object at a key, the two are merged the
    /// same way; otherwise `other`'s value wins (new keys go after the existing ones).
    mutating func deepMerge(_ other: JSONObject) {
        for (key, value) in other {
            if case .object(var mine) = self[key], case .object(let theirs) = value {
                mine.deepMerge(theirs)
                self[key] = .object(mine)
            } else {
                self[key] = value
            }
        }
    }
}
