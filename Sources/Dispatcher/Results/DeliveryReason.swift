/// Why a delivery has its disposition (SEMANTICS sections 3 to 6).
public enum DeliveryReason: String, Sendable, Hashable, CaseIterable {
    // Gating (section 3).
    /// The `legacy` profile has no service extensions.
    case legacyProfile = "legacy-profile"
    /// Only `alert` pushes can be modified.
    case pushTypeNotModifiable = "push-type-not-modifiable"
    /// No alert text: nothing for an extension to modify.
    case noAlert = "no-alert"
    /// The user has not authorized notifications for the app (`denied` or `notDetermined`,
    /// section 20): nothing is presented, so no extension runs.
    case notAuthorized = "not-authorized"
    /// The user switched the app's alerts off (section 20): nothing is shown that an extension
    /// could change.
    case alertsOff = "alerts-off"
    /// `mutable-content` is not 1.
    case notMutable = "not-mutable"
    /// No service extension configured for the app and category.
    case noExtension = "no-extension"
    // Running the extension (section 4).
    /// The extension finished in time and changed the content.
    case `extension` = "extension"
    /// The extension finished in time and changed nothing.
    case extensionUnchanged = "extension-unchanged"
    /// The deadline passed; a best attempt that differs was handed over.
    case extensionExpiredBestAttempt = "extension-expired-best-attempt"
    /// The deadline passed without a different best attempt.
    case extensionTimeout = "extension-timeout"
    /// A step failed.
    case extensionFailed = "extension-failed"
    /// The chain's memory passed its limit (`extensionMemoryLimit`, section 22): stopped at once,
    /// the original is shown, no best attempt is taken.
    case extensionMemoryLimit = "extension-memory-limit"
    /// The extension's content has no alert text, so the original is shown.
    case alertRemoved = "alert-removed"
    /// The modified delivery would be larger than the output limit (`kafka.maxMessageBytes`), so
    /// the original content is delivered, as when an extension fails (docs/worker.md, "Failures").
    case outputTooLarge = "output-too-large"
    // Discarded (sections 5 and 6).
    /// `apns-expiration` had passed when the request was processed.
    case expired = "expired"
    /// A silent push to a force-quit app.
    case appForceQuit = "app-force-quit"
    /// The extension's content has no alert text and the app has the `filtering` entitlement, so
    /// nothing is shown (section 13).
    case extensionFiltered = "extension-filtered"
    // Store and forward (section 16).
    /// The device was offline and `apns-expiration` was 0: tried once, not stored.
    case notStored = "not-stored"
    /// A newer notification for the same device and app replaced the stored one.
    case superseded = "superseded"
    /// A newer notification with the same `apns-collapse-id` replaced the stored one.
    case collapsed = "collapsed"
}
