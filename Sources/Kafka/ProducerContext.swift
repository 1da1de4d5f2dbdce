import Logging
import Synchronization

/// What a producer's C callbacks see: besides the logger, the first fatal error and who to tell.
///
/// A fatal error (an idempotent producer that lost its sequence state, say) makes every later
/// produce fail; without this callback it would surface only as one failed delivery report after
/// another.
final class ProducerContext: ClientContext, @unchecked Sendable {
    // @unchecked Sendable: the superclass's state is immutable; ours is in a `Mutex`.

    /// The first fatal error, once one happened.
    let fatalError = Mutex<KafkaError?>(nil)
    /// Told of the first fatal error, on librdkafka's thread (the producer's poll thread).
    let onFatalError: @Sendable (KafkaError) -> Void
    /// The batches awaiting delivery reports, which the delivery-report callback completes.
    let deliveries = PendingDeliveries()

    /// A context that logs to `logger` and reports the first fatal error to `onFatalError`.
    init(logger: Logger, onFatalError: @escaping @Sendable (KafkaError) -> Void) {
        self.onFatalError = onFatalError
        super.init(logger: logger)
    }
}
