import Dispatcher
import Foundation
import Synchronization

/// The attachment stores of one registry, one per directory, and their periodic sweep.
///
/// Steps that name the same directory share its store, so that no step's sweep removes a file
/// another step is still writing; they must then agree on its retention. Stores are swept after
/// the files they keep (for size) and by ``runSweeps(every:)`` (for age), which
/// ``BuiltInExtensions/withRegistry(maxResponseBytes:connectTimeout:connectionsPerHost:addKinds:_:)``
/// runs for as long as its body.
public final class AttachmentStores: Sendable {
    private let stores = Mutex<[String: AttachmentStore]>([:])

    /// No stores yet: each `attachment` step adds its own when it is configured.
    public init() {}

    /// The store of `settings.store`, created on first use.
    /// - Throws: `ExtensionOptionsError` when another step uses the directory with another retention.
    func store(for settings: AttachmentSettings) throws(ExtensionOptionsError) -> AttachmentStore {
        let key = settings.store.standardizedFileURL.path
        let result: Result<AttachmentStore, ExtensionOptionsError> = stores.withLock { stores in
            if let existing = stores[key] {
                guard existing.retention == settings.retention else {
                    return .failure(ExtensionOptionsError(
                        key: "store", value: settings.store.path,
                        "another attachment step keeps this directory with a different storeMaxAge or storeMaxBytes; "
                            + "steps sharing a store need the same retention"))
                }
                return .success(existing)
            }
            let store = AttachmentStore(directory: settings.store, retention: settings.retention)
            stores[key] = store
            return .success(store)
        }
        return try result.get()
    }

    /// Sweeps every store whose sweep is due, every `tick`, until the task is cancelled.
    public func runSweeps(every tick: Duration = .seconds(1)) async {
        while !Task.isCancelled {
            for store in stores.withLock({ Array($0.values) }) {
                await store.sweepIfDue()
            }
            try? await Task.sleep(for: tick)
        }
    }
}
