import Notifications

/// Where a delivery's or a response's app state came from (SEMANTICS section 6: the `app-state`
/// header, else the app-states table, else the app's `defaultAppState`, else `notRunning`).
public enum AppStateSource: String, Sendable, Hashable, CaseIterable {
    /// The request's `app-state` header.
    case header
    /// The app-states table (`topics.appStates`).
    case appStatesTable
    /// The app's `defaultAppState`.
    case appDefault
    /// None of them said: `notRunning`.
    case fallback

    /// The source in words, for a person.
    package var summary: String {
        switch self {
        case .header: "the record's app-state header"
        case .appStatesTable: "the app-states table"
        case .appDefault: "the app's defaultAppState"
        case .fallback: "the default: neither the record, the app-states table nor the app's settings say"
        }
    }

    /// The state of the app `request` is for, and where it came from; the table is asked only
    /// when the request has no `app-state` header.
    static func resolve(
        _ request: NotificationRequest, appStates: any AppStateLookup, appDefault: AppState?
    ) -> (state: AppState, source: AppStateSource) {
        resolve(
            override: request.appStateOverride, deviceToken: request.deviceToken, appStates: appStates, appDefault: appDefault)
    }

    /// The state of an app on the device `deviceToken` (a request's or a response's), and where
    /// it came from: the record's `app-state` header (`override`), else the table, else the app's
    /// default (`appDefault`, its `defaultAppState`), else `notRunning`.
    static func resolve(
        override: AppState?, deviceToken: String, appStates: any AppStateLookup, appDefault: AppState?
    ) -> (state: AppState, source: AppStateSource) {
        resolve(override: override, fromTable: appStates.appState(forDeviceToken: deviceToken), appDefault: appDefault)
    }

    /// The first of the record's state, the table's (read only when the record has none) and the
    /// app's default; `notRunning` when none says.
    static func resolve(
        override: AppState?, fromTable table: @autoclosure () -> AppState?, appDefault: AppState?
    ) -> (state: AppState, source: AppStateSource) {
        if let state = override { return (state, .header) }
        if let state = table() { return (state, .appStatesTable) }
        if let state = appDefault { return (state, .appDefault) }
        return (.notRunning, .fallback)
    }
}
