import Dispatcher
import Foundation
import JSON
import Notifications

/// The checked options of an `attachment` step.
struct AttachmentSettings: Sendable {
    /// Where the media URL is in the payload.
    let urlPath: DottedPath
    /// The directory files are stored in (created at start-up when missing).
    let store: URL
    /// Non-public hosts and ranges that downloads may reach all the same.
    let allowHosts: HostAllowList
    /// The size limit of each kind.
    let maxBytes: [MediaKind: Int]
    /// The time one download has; nil means until the chain's deadline.
    let timeout: Duration?
    /// What the store keeps (`storeMaxAge`, `storeMaxBytes`).
    let retention: AttachmentRetention

    /// Where the media URL is when `urlPath` is not given.
    static let defaultURLPath = "media-url"

    /// The option keys an `attachment` step accepts.
    static let optionKeys = ["urlPath", "store", "allowHosts", "maxBytes", "timeout", "storeMaxAge", "storeMaxBytes"]

    /// Checks `options` and creates the store directory.
    init(options: ExtensionOptions) throws(ExtensionOptionsError) {
        try options.rejectUnknownKeys(allowed: Self.optionKeys)
        let pathText = options.values.keys.contains("urlPath") ? try options.string("urlPath") : Self.defaultURLPath
        guard let urlPath = DottedPath(pathText) else {
            throw ExtensionOptionsError(key: "urlPath", value: pathText, "a path is keys separated by dots, e.g. fcm_options.image")
        }
        self.urlPath = urlPath
        self.store = try Self.storeDirectory(options)
        self.allowHosts = try Self.allowList(options)
        self.maxBytes = try Self.limits(options)
        self.timeout = try Self.positiveDuration(options, "timeout")
        self.retention = try Self.retention(options, maxBytes: maxBytes)
    }

    /// The positive duration at `key`, nil when absent.
    private static func positiveDuration(_ options: ExtensionOptions, _ key: String) throws(ExtensionOptionsError) -> Duration? {
        guard options.values.keys.contains(key) else { return nil }
        let text = try options.string(key)
        guard let duration = DurationOption.parse(text), duration > .zero else {
            throw ExtensionOptionsError(key: key, value: text, "expected a positive duration such as 10s or 500ms")
        }
        return duration
    }

    private static func retention(_ options: ExtensionOptions, maxBytes: [MediaKind: Int]) throws(ExtensionOptionsError) -> AttachmentRetention {
        let maxAge = try positiveDuration(options, "storeMaxAge") ?? AttachmentRetention.defaultMaxAge
        var bytes = AttachmentRetention.defaultMaxTotalBytes
        if let value = options["storeMaxBytes"] {
            guard let given = value.numberValue?.intValue, given > 0 else {
                throw ExtensionOptionsError(key: "storeMaxBytes", value: value.compactText, "expected a positive whole number of bytes")
            }
            bytes = given
        }
        // The newest file is always kept, so the budget must hold the largest file a step may store.
        let largest = maxBytes.values.max() ?? 0
        guard bytes >= largest else {
            throw ExtensionOptionsError(
                key: "storeMaxBytes", value: String(bytes),
                "must be at least the largest maxBytes (\(largest)), or a file just stored would not fit")
        }
        return AttachmentRetention(maxAge: maxAge, maxTotalBytes: bytes)
    }

    private static func storeDirectory(_ options: ExtensionOptions) throws(ExtensionOptionsError) -> URL {
        let path = try options.string("store")
        guard !path.isEmpty else { throw ExtensionOptionsError(key: "store", value: path, "expected a directory path") }
        let directory = URL(fileURLWithPath: path, isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw ExtensionOptionsError(key: "store", value: path, "cannot create the directory: \(error.localizedDescription)")
        }
        guard FileManager.default.isWritableFile(atPath: directory.path) else {
            throw ExtensionOptionsError(key: "store", value: path, "the directory is not writable")
        }
        return directory
    }

    private static func allowList(_ options: ExtensionOptions) throws(ExtensionOptionsError) -> HostAllowList {
        var entries: [String] = []
        for element in try options.optionalArray("allowHosts") ?? [] {
            guard let text = element.stringValue else {
                throw ExtensionOptionsError(key: "allowHosts", value: element.compactText, "expected host names or CIDR ranges")
            }
            entries.append(text)
        }
        switch HostAllowList.parse(entries) {
        case .success(let list):
            return list
        case .failure(let invalid):
            throw ExtensionOptionsError(
                key: "allowHosts", value: invalid.entry, "expected a host name (media.example.com) or a CIDR range (10.0.0.0/8)")
        }
    }

    private static func limits(_ options: ExtensionOptions) throws(ExtensionOptionsError) -> [MediaKind: Int] {
        var limits = Dictionary(uniqueKeysWithValues: MediaKind.allCases.map { ($0, $0.defaultMaxBytes) })
        for (key, value) in try options.optionalObject("maxBytes") ?? JSONObject() {
            guard let kind = MediaKind(rawValue: key) else {
                throw ExtensionOptionsError(key: "maxBytes", value: key, "unknown media kind; expected image, audio or video")
            }
            guard let bytes = value.numberValue?.intValue, bytes > 0 else {
                throw ExtensionOptionsError(key: "maxBytes", value: value.compactText, "\(key) must be a positive whole number of bytes")
            }
            limits[kind] = bytes
        }
        return limits
    }
}
