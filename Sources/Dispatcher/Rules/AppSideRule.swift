/// The row of SEMANTICS section 6 that decided a delivery's app side (callback and launch): the
/// first row that matches the push type, the app's state and the original payload.
public enum AppSideRule: String, Sendable, Hashable, CaseIterable {
    /// `alert`/`background`, foreground: FCH, else the legacy method, else none.
    case foreground
    /// `alert`/`background`, background or suspended, `content-available` 1: FCH, else none.
    case backgroundContentAvailable
    /// `alert`/`background`, background or suspended, otherwise: no callback.
    case backgroundOtherwise
    /// `alert`/`background`, not running, `content-available` 1: FCH and a `backgroundDelivery` launch.
    case notRunningContentAvailable
    /// `alert`/`background`, not running, alert text: a `userOpensNotification` launch.
    case notRunningAlertText
    /// `alert`/`background`, not running, otherwise: nothing.
    case notRunningOtherwise
    /// `alert`/`background`, force-quit, silent: discarded (`app-force-quit`).
    case forceQuitSilent
    /// `alert`/`background`, force-quit, alert text: a `userOpensNotification` launch.
    case forceQuitAlertText
    /// `alert`/`background`, force-quit, otherwise: nothing.
    case forceQuitOtherwise
    /// `voip` (PushKit): the PushKit callback in every state; a `backgroundDelivery` launch when not running or force-quit.
    case voip
    /// Every other push type: no callback, no launch.
    case otherPushType

    /// The row as the contract's table writes it (app state and condition), for a person.
    package var row: String {
        switch self {
        case .foreground: "foreground (any payload)"
        case .backgroundContentAvailable: "background or suspended, content-available is 1"
        case .backgroundOtherwise: "background or suspended, content-available is not 1"
        case .notRunningContentAvailable: "notRunning, content-available is 1"
        case .notRunningAlertText: "notRunning, has alert text"
        case .notRunningOtherwise: "notRunning, neither content-available 1 nor alert text"
        case .forceQuitSilent: "forceQuit, silent"
        case .forceQuitAlertText: "forceQuit, has alert text"
        case .forceQuitOtherwise: "forceQuit, neither silent nor alert text"
        case .voip: "voip (PushKit), any state"
        case .otherPushType: "a push type other than alert, background and voip"
        }
    }
}
