package import Dispatcher
package import Foundation
package import Notifications

/// Explains requests and responses: decides each with the dispatcher's own rules (a request's
/// service extensions run as `dispatch` runs them) and reads the path it took off the result, with
/// lint's warnings on a request.
package struct Explainer: Sendable {
    /// The dispatcher whose decisions are explained.
    package let dispatcher: Dispatcher
    /// The lint whose warnings are shown.
    package let lint: PayloadLint

    /// Creates an explainer; `lint` defaults to one for the dispatcher's configuration.
    package init(dispatcher: Dispatcher, lint: PayloadLint? = nil) {
        self.dispatcher = dispatcher
        self.lint = lint ?? PayloadLint(configuration: dispatcher.configuration)
    }

    /// Decides `record` as `dispatch` does (a response when it comes from the responses topic, else
    /// a request) and explains what happened.
    /// - Parameters:
    ///   - appStates: the app-states table (none offline).
    ///   - receivedAt: when the record was received; `apns-expiration` is compared with it.
    package func explain(
        _ record: RequestRecord, appStates: any AppStateLookup = NoAppStates(), receivedAt: Date = Date()
    ) async -> Explanation {
        await explain(record, tables: StateTables(appStates: appStates), now: receivedAt)
    }

    /// Decides `record` as `dispatch` does, with `tables` (the state read from the lines before it)
    /// at `now` (its time of processing, SEMANTICS section 11.1), and explains what happened.
    package func explain(_ record: RequestRecord, tables: StateTables, now: Date) async -> Explanation {
        let result = await dispatcher.decide(record, tables: tables, now: now)
        let warnings =
            result.delivery.map { lint.warnings(for: $0.request, payloadBytes: record.value?.count ?? 0, settings: $0.settings) } ?? []
        return Explanation(
            record: record, isResponse: dispatcher.isResponse(record), result: result, configuration: dispatcher.configuration,
            warnings: warnings)
    }
}
