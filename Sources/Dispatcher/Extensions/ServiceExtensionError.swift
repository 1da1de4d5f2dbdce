/// An error of a service extension that names its kind, for the log line of its failure.
///
/// A failure's log line carries the app, category and step, and this kind: never the error's
/// description, which may quote the payload or a URL (signed media URLs carry secrets). Errors
/// that do not conform are logged by their type's name.
public protocol ServiceExtensionError: Error {
    /// A short, fixed identifier of what went wrong (`webhook-status`,
    /// `attachment-non-public-address`): never a value from the request, payload or configuration.
    var kind: String { get }
}
