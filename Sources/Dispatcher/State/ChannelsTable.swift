package import Records
import Synchronization

/// The channels table of SEMANTICS section 11.2: broadcast channels by channel ID (the base64 text,
/// exact), kept current from the compacted channels topic; a null value deletes the entry. Every
/// worker reads all of it. Reads and updates may come from any thread.
package final class ChannelsTable: Sendable {
    /// What one channels record did to the table.
    package enum Update: Sendable, Hashable {
        /// The channel's entry was set.
        case set(channelID: String, entry: ChannelEntry)
        /// The channel's entry was removed (a null value).
        case deleted(channelID: String)
        /// The record was ignored; the reason is for the log.
        case invalid(reason: String)
    }

    private let entries = Mutex<[String: ChannelEntry]>([:])

    /// An empty table.
    package init() {}

    /// The number of entries.
    package var count: Int { entries.withLock { $0.count } }

    /// The entry of `channelID`, nil when unknown.
    package func entry(forChannelID channelID: String) -> ChannelEntry? {
        entries.withLock { $0[channelID] }
    }

    /// Whether `channelID` is a channel of `bundleID` (section 15 check 8, section 14.3 row 2).
    package func hasChannel(_ channelID: String, bundleID: String) -> Bool {
        entry(forChannelID: channelID)?.bundleID == bundleID
    }

    /// Applies one record of the channels topic: the key is the channel ID, as written.
    @discardableResult
    package func apply(key: RecordBytes?, value: RecordBytes?) -> Update {
        guard let key, !key.isEmpty, let channelID = String(validating: key, as: UTF8.self) else {
            return .invalid(reason: "the key is not a channel ID (a non-empty UTF-8 text)")
        }
        guard let value else {
            entries.withLock { _ = $0.removeValue(forKey: channelID) }
            return .deleted(channelID: channelID)
        }
        do throws(StateRecordError) {
            let entry = try ChannelEntry(parsing: value)
            entries.withLock { $0[channelID] = entry }
            return .set(channelID: channelID, entry: entry)
        } catch {
            return .invalid(reason: error.message)
        }
    }
}
