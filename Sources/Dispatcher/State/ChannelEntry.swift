package import Records
import JSON

/// One entry of the channels table (SEMANTICS section 11.2): a broadcast channel, the result of a
/// channel-creation request.
package struct ChannelEntry: Sendable, Hashable {
    /// `bundleId`: the app the channel belongs to (required).
    package var bundleID: String
    /// `storagePolicy`: 0 (no storage) or 1 (the default); recorded, not modelled (section 15).
    package var storagePolicy: Int

    /// A channel of `bundleID`.
    package init(bundleID: String, storagePolicy: Int = 1) {
        self.bundleID = bundleID
        self.storagePolicy = storagePolicy
    }

    /// Reads a channels record's value.
    /// - Throws: ``StateRecordError`` naming the field that is wrong.
    package init(parsing value: RecordBytes) throws(StateRecordError) {
        guard let object = (try? JSONValue(parsing: value))?.objectValue else { throw StateRecordError("the value is not a JSON object") }
        guard let bundleID = object["bundleId"]?.stringValue else { throw StateRecordError("bundleId is missing or not a string") }
        self.init(bundleID: bundleID)
        if let policy = object["storagePolicy"], !policy.isNull {
            guard let number = policy.numberValue, number.text == "0" || number.text == "1" else {
                throw StateRecordError("storagePolicy is not 0 or 1")
            }
            storagePolicy = number.text == "0" ? 0 : 1
        }
    }
}
