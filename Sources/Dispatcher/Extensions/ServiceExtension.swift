/// A notification service extension, shaped after Apple's `UNNotificationServiceExtension`.
///
/// Like Apple's, one instance serves one notification: the registry's factory makes a fresh
/// instance per request and step, so an instance may keep its partial work for the last chance.
///
/// - `didReceive(_:)` returns the modified content (or the content it was given, to change
///   nothing). It is cancelled when the deadline passes and should stop promptly then; its result
///   is not waited for.
/// - `serviceExtensionTimeWillExpire()` is then called on the same instance, concurrently with
///   the cancelled `didReceive`, and has `dispatch.expiryGrace` to hand over a best attempt. The
///   default hands over nothing.
///
/// - Important: both methods may run at the same time on one instance: keep shared partial work in
///   an actor or a `Mutex`.
public protocol ServiceExtension: Sendable {
    /// Modifies the content of `request`; throwing fails the step (the original is delivered).
    func didReceive(_ request: ServiceExtensionRequest) async throws -> NotificationContent

    /// The last chance after the deadline: a best attempt, or nil to hand over nothing.
    func serviceExtensionTimeWillExpire() async -> NotificationContent?
}

extension ServiceExtension {
    /// Hands over nothing: the chain's best attempt is the content after its last finished step.
    public func serviceExtensionTimeWillExpire() async -> NotificationContent? { nil }
}
