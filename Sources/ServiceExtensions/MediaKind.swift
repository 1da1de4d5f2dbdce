/// The three kinds of media a notification may attach, each with Apple's size limit.
enum MediaKind: String, Sendable, Hashable, CaseIterable {
    case image
    case audio
    case video

    /// Apple's limit for an attachment of this kind (`UNNotificationAttachment`): 10 MB, 5 MB, 50 MB.
    var defaultMaxBytes: Int {
        switch self {
        case .image: 10_000_000
        case .audio: 5_000_000
        case .video: 50_000_000
        }
    }
}
