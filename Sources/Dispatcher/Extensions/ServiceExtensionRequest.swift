public import Notifications

/// What a service extension step is asked to modify: the validated request and the content
/// entering the step (the previous step's output in a chain).
public struct ServiceExtensionRequest: Sendable {
    /// The validated request: device token, bundle ID, headers as received, original payload...
    public let notification: NotificationRequest
    /// The content entering this step.
    public let content: NotificationContent
    /// The request's `aps.category`, nil when absent.
    public let category: String?
    /// The step's name in reports.
    public let stepName: String
    /// When the chain's deadline passes; `didReceive` is cancelled then.
    public let deadline: ContinuousClock.Instant
    /// The chain's memory (SEMANTICS section 22): declare here what the step holds beyond the
    /// content it was given, and read what it may still hold. Passing the limit stops the chain.
    public let memory: ExtensionMemory

    /// Creates a request for one step; `memory` defaults to one of its own at the default limit
    /// (a step called outside a chain).
    package init(
        notification: NotificationRequest,
        content: NotificationContent,
        category: String?,
        stepName: String,
        deadline: ContinuousClock.Instant,
        memory: ExtensionMemory? = nil
    ) {
        self.notification = notification
        self.content = content
        self.category = category
        self.stepName = stepName
        self.deadline = deadline
        self.memory =
            memory ?? ExtensionMemory(limit: DispatchSettings.defaultExtensionMemoryLimit, content: ExtensionMemory.bytes(of: content))
    }
}
