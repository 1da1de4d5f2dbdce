package import Foundation
package import Notifications

extension Dispatcher {
    /// Checks 7 and 8 of a broadcast (section 15: the `broadcast` entitlement, then the channels
    /// table), then its fan-out: one command per subscribed activity, ascending by token. Without
    /// subscribers, a valid broadcast is decided with no output.
    func prepareBroadcast(_ broadcast: BroadcastRequest, record: RequestRecord, tables: StateTables, now: Date) -> DispatchStep {
        if let rejection = broadcastRejection(broadcast, channels: tables.channels) {
            return .decided(broadcastDeadLetter(record, rejection, at: now))
        }
        let subscribers = (tables.activityIndex ?? tables.activities)?.subscribers(ofChannel: broadcast.channelID, bundleID: broadcast.bundleID) ?? []
        let commands = broadcastCommands(broadcast, record: record, subscribers: subscribers, appStates: tables.appStates, now: now)
        guard !commands.isEmpty else { return .decided(DispatchResult(.several([]), outputs: [])) }
        return .activity(ActivityWork(commands: commands))
    }

    /// The fan-out of a valid broadcast (section 15): one command per token of `subscribers`
    /// (the activities subscribed to its channel, as ``ActivitiesTable/subscribers(ofChannel:bundleID:)``
    /// gives them), in ascending token order, each marked expired when the broadcast's
    /// `apns-expiration` has passed at `now`.
    package func broadcastCommands(
        _ broadcast: BroadcastRequest, record: RequestRecord, subscribers: [String], appStates: any AppStateLookup, now: Date
    ) -> [ActivityCommand] {
        let isExpired = broadcast.expiration.map { $0 < Timestamp.seconds(now) } ?? false
        let appDefault = apps[broadcast.bundleID]?.settings.defaultAppState
        return subscribers.sorted().map { token in
            // A broadcast's app-state header is ignored (section 15): the table, the app's default.
            let (state, source) = AppStateSource.resolve(
                override: nil, deviceToken: token, appStates: appStates, appDefault: appDefault)
            return ActivityCommand(
                broadcast: broadcast, record: record, activityToken: token, appState: state, appStateSource: source,
                isExpired: isExpired)
        }
    }

    /// `FeatureNotEnabled` without the app's `broadcast` entitlement (an app not configured has
    /// none), then `ChannelNotRegistered` without the channel for the bundle ID; nil when both pass.
    func broadcastRejection(_ broadcast: BroadcastRequest, channels: ChannelsTable?) -> Rejection? {
        guard configuration.apps[broadcast.bundleID]?.entitlements.contains(.broadcast) == true else {
            return Rejection(
                .featureNotEnabled,
                "The app \(MessageText.quote(broadcast.bundleID)) does not have the broadcast entitlement (apps.\(broadcast.bundleID).entitlements).")
        }
        guard channels?.hasChannel(broadcast.channelID, bundleID: broadcast.bundleID) == true else {
            return Rejection(
                .channelNotRegistered,
                "The channel \(MessageText.quote(broadcast.channelID)) of the apns-channel-id header is not registered for \(MessageText.quote(broadcast.bundleID)) (channels table).")
        }
        return nil
    }

    /// A broadcast's dead letter (section 15): the request unchanged, with, when it has no
    /// `apns-id`, the broadcast's identifier added.
    func broadcastDeadLetter(_ record: RequestRecord, _ rejection: Rejection, at now: Date) -> DispatchResult {
        deadLettered(record, rejection, at: now, addedMessageID: RequestValidator.broadcastIdentifier(record))
    }
}
