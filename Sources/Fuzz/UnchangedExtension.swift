import Dispatcher

/// A service extension step that hands its content back unchanged: the kind the sample
/// configuration's steps are built with here (``FuzzDispatchers``), never run by the fuzzer.
struct UnchangedExtension: ServiceExtension {
    func didReceive(_ request: ServiceExtensionRequest) async throws -> NotificationContent {
        request.content
    }
}
