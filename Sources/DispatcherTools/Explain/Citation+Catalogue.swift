import Dispatcher
import Notifications

/// The sentences `explain` and lint quote, each once. Apple's come from the pages named (the
/// project's seed documents); the contract's from SEMANTICS.md. Quotes are word for word: only
/// Markdown marks (backticks, emphasis, links) are left out.
extension Citation {
    // MARK: Apple's pages

    private static let serviceExtensionPage = Source.apple(
        page: "UNNotificationServiceExtension",
        url: "https://developer.apple.com/documentation/usernotifications/unnotificationserviceextension")
    private static let didReceivePage = Source.apple(
        page: "didReceive(_:withContentHandler:)",
        url: "https://developer.apple.com/documentation/usernotifications/unnotificationserviceextension/didreceive(_:withcontenthandler:)")
    /// Seed 001: the deprecated delegate method, and its list of the delegate's other deprecated methods.
    static let legacyDelegatePage = Source.apple(
        page: "application(_:didReceiveRemoteNotification:)",
        url: "https://developer.apple.com/documentation/uikit/uiapplicationdelegate/application(_:didreceiveremotenotification:)")
    /// Seed 003: the content extension protocol.
    static let contentExtensionPage = Source.apple(
        page: "UNNotificationContentExtension",
        url: "https://developer.apple.com/documentation/usernotificationsui/unnotificationcontentextension")

    /// When the system runs a service extension at all.
    static let serviceExtensionConditions = Citation(
        serviceExtensionPage,
        "When a remote notification for your app is received, the system loads your extension and calls its didReceive(_:withContentHandler:) method only when both of the following conditions are met: The remote notification is configured to display an alert. The remote notification’s aps dictionary includes the mutable-content key with the value set to 1."
    )
    /// The first condition: an alert.
    static let alertCondition = Citation(serviceExtensionPage, "The remote notification is configured to display an alert.")
    /// The second condition: `mutable-content`.
    static let mutableContentCondition = Citation(
        serviceExtensionPage, "The remote notification’s aps dictionary includes the mutable-content key with the value set to 1.")
    /// Silent, sound-only and badge-only pushes.
    static let cannotModifySilent = Citation(
        serviceExtensionPage, "You can’t modify silent notifications or those that only play a sound or badge the app’s icon.")
    /// What an extension may change.
    static let modifyContent = Citation(
        didReceivePage,
        "You can modify any of the content from the original request. You might customize the content for the current user or replace it altogether. You can use this method to download images or movies and add them as attachments to the content."
    )
    /// An extension that changes nothing.
    static let unchangedContent = Citation(
        didReceivePage,
        "If you decide not to modify the content, call the contentHandler block with the original content from the request parameter.")
    /// Alert text must stay.
    static let keepAlertText = Citation(
        didReceivePage,
        "You may also modify the alert text as long as you don’t remove it. If the content object doesn’t contain any alert text, the system ignores your modifications and delivers the original notification content."
    )
    /// The time an extension has.
    static let timeLimit = Citation(
        didReceivePage,
        "Your extension has a limited amount of time (no more than 30 seconds) to modify the content and execute the contentHandler block.")
    /// The last chance when time runs out.
    static let lastChance = Citation(
        didReceivePage,
        "If you don’t execute that block in a timely manner, the system calls your extension’s serviceExtensionTimeWillExpire() method to give you one last chance to execute the block. If you don’t, the system presents the notification’s original content to the user."
    )
    /// A delegate with both methods.
    static let fetchCompletionHandlerWins = Citation(
        legacyDelegatePage,
        "If your delegate implements both methods, the app object calls the application(_:didReceiveRemoteNotification:fetchCompletionHandler:) method.")
    /// A running app gets the callback.
    static let runningAppCallback = Citation(
        legacyDelegatePage, "If the app is running, the app calls this method to process incoming remote notifications.")
    /// A push launches an app that is not running.
    static let launchesApp = Citation(
        legacyDelegatePage,
        "If the app is not running when a remote notification arrives, the method launches the app and provides the appropriate information in the launch options dictionary."
    )
    /// A missing badge clears the icon (legacy).
    static let badgeAbsenceClears = Citation(
        legacyDelegatePage, "The absence of a badge property indicates that any number currently badging the icon should be removed.")
    /// Payloads are small.
    static let strictSizeLimit = Citation(
        legacyDelegatePage,
        "However, custom-defined properties should not be used for mass data transport because there is a strict size limit per notification (256 bytes) and delivery is not guaranteed."
    )
    /// A content extension's categories.
    static let contentExtensionCategories = Citation(
        contentExtensionPage,
        "A string or an array of strings. Each string contains the identifier of a category declared by the app using the UNNotificationCategory class.")
    /// What a content extension is for.
    static let contentExtensionPurpose = Citation(
        contentExtensionPage,
        "You create this type of extension to improve the way your notifications are presented, possibly by adding custom colors and branding, or by incorporating media and other dynamic content into your notification interface."
    )

    // MARK: The contract (SEMANTICS.md)

    /// The order of validation.
    static let checkOrder = Citation(.contract(section: "1"), "Checks run in this order; the first failure is the reason (decision)")
    /// Every invalid request becomes one dead letter.
    static let oneDeadLetter = Citation(.contract(section: "5"), "Every invalid request produces exactly one dead-letter record.")
    /// Push type inference.
    static let pushTypeInference = Citation(
        .contract(section: "1"),
        "When absent (decision): alert if aps has alert, badge or sound; else background if content-available is 1; else alert.")
    /// The priority header.
    static let priority = Citation(
        .contract(section: "1"),
        "optional; default 10, or 5 when the push type is background (decision). One of 10, 5, 1, else BadPriority. Push type background with priority 10: BadPriority."
    )
    /// Payload size.
    static let payloadTooLarge = Citation(.contract(section: "2"), "Larger than the limit: PayloadTooLarge (status 413).")
    /// Where the app state comes from.
    static let appStateSources = Citation(
        .contract(section: "6"),
        "The app's state: the app-state header, else the app-states table (section 9), else the app's defaultAppState, else notRunning.")
    /// Expired notifications.
    static let expiration = Citation(
        .contract(section: "1"), "Non-zero and earlier than the time of processing: the notification is discarded (section 5).")
    /// What a discarded delivery carries.
    static let discarded = Citation(
        .contract(section: "5"),
        "A discarded delivery (reason expired: checked first, before gating; or app-force-quit, section 6) carries the original payload, extension null, presentation null, badgeEffect unchanged, appCallback null, and no launch record."
    )
    /// The order of gating.
    static let gatingOrder = Citation(.contract(section: "3"), "In this order; the first rule that applies decides")
    /// The legacy profile.
    static let legacyProfile = Citation(
        .contract(section: "8"),
        "legacy: the world of seed 001 before iOS 7: 256-byte payload limit for every push type; no service extensions (rule 1) and no content extensions (presentation null)"
    )
    /// Routing by category.
    static let routing = Citation(
        .contract(section: "4"),
        "A category listed under the app's categories with a serviceExtension uses it (none there means no extension); otherwise the app's own serviceExtension; otherwise rule 5 above."
    )
    /// The deadline.
    static let deadline = Citation(
        .contract(section: "4"),
        "Deadline: dispatch.deadline (default 30 s), overridden by the app's or category's deadline. When it passes, the running step is cancelled and gets dispatch.expiryGrace (default 2 s) to hand over a best attempt (\"time will expire\")."
    )
    /// A failed step.
    static let stepFailed = Citation(
        .contract(section: "4"),
        "A step's output must pass the type rules of section 2 (a JSON object with an aps object whose known keys have the right types; the size limit does not apply), else the step failed. A failed step fails the whole chain."
    )
    /// The alert-removed post-check.
    static let alertRemoved = Citation(
        .contract(section: "4"),
        "The alert-removed check applies to every modified result, best attempts included: without alert text Apple ignores the modifications and shows the original."
    )
    /// The interruption level and its entitlements (section 17.2).
    static let interruptionLevel = Citation(
        .contract(section: "17.2"),
        "interruptionLevel: the delivered aps.interruption-level, default active. time-sensitive without the timeSensitive entitlement, and critical without criticalAlerts, become active."
    )
    /// `widgetReload` (section 18).
    static let widgetReload = Citation(
        .contract(section: "18"),
        "The delivery field widgetReload is true for push type widgets or controls when content-changed is true, false for those push types otherwise, and null for every other push type."
    )
    /// The foreground badge rule (section 17.2).
    static let foregroundBadge = Citation(
        .contract(section: "17.2"),
        "badgeEffect (section 6) in the foreground, for a delivery that has a userAlert (17.1): a badge (0 included) takes effect only when badge ∈ options; otherwise unchanged."
    )
    /// Filtering by an entitled extension (section 13).
    static let filtering = Citation(
        .contract(section: "13"),
        "An app whose entitlements include filtering may suppress a notification: when section 4 would give alert-removed, the delivery is instead disposition discarded, reason extension-filtered; payload the original payload, attachments [], extension filled in; presentation null, userAlert null, badgeEffect unchanged, appCallback null, and no launch record."
    )
    /// The app side reads the original payload.
    static let appSideReadsOriginal = Citation(
        .contract(section: "6"),
        "The conditions below (content-available, alert text, silent) are read on the request's original payload: the system decides how to wake the app from the push, not from what an extension made of it."
    )
    /// PushKit and the other push types.
    static let voipAndOthers = Citation(
        .contract(section: "6"),
        "For voip (PushKit): appCallback pushRegistry(_:didReceiveIncomingPushWith:for:completion:) in every state; launch backgroundDelivery when notRunning or forceQuit (VoIP pushes relaunch the app). Every other push type: appCallback null, no launch."
    )
    /// The legacy profile's app side.
    static let legacyAppSide = Citation(
        .contract(section: "8"),
        "content-available has no effect (nothing is silent, no background delivery); only the deprecated callback exists (FCH is never called; in the foreground the legacy method is called if implemented); absence of badge clears the badge."
    )
    /// The badge effect.
    static let badgeEffect = Citation(
        .contract(section: "6"), "Badge effect: badge present: set (0: clear). Absent: unchanged; in the legacy profile, clear (seed 001).")
    /// The count an increment writes into the payload (section 21.2).
    static let badgeIncrement = Citation(
        .contract(section: "21.2"),
        "With badge-increment: N, the payload the device receives has aps.badge = max(0, c + N). This is written into the payload before section 3, so gating, the service extension and the delivered payload all see it, exactly as if the provider had sent that number."
    )
    /// When the ledger follows a delivery (section 21.3).
    static let badgeLedgerChange = Citation(
        .contract(section: "21.3"),
        "The dispatcher writes a badges record (value {\"count\", \"updatedAt\": now}, headers apns-id and traceparent) exactly when a delivery of a ledger app has badgeEffect set or clear: the device's badge changed, and the ledger follows it [...]. When badgeEffect is unchanged [...], the ledger is not written and the count stays c."
    )
    /// Presentation by a content extension.
    static let presentation = Citation(
        .contract(section: "7"),
        "A delivery (push type alert, modern profile) whose category matches gets presentation: {\"contentExtension\", \"initialContentSizeRatio\", \"defaultContentHidden\", \"overridesDefaultTitle\", \"userInteractionEnabled\"}; otherwise presentation is null."
    )

    // MARK: The user's notification settings (section 20)

    /// Gating rule 3a.
    static let notAuthorizedGate = Citation(
        .contract(section: "20"), "3a | the entry's authorization is denied or notDetermined | original | not-authorized")
    /// Gating rule 3b.
    static let alertsOffGate = Citation(.contract(section: "20"), "3b | the entry's alerts is false | original | alerts-off")
    /// Nothing is presented without authorization.
    static let unauthorizedPresentsNothing = Citation(
        .contract(section: "20"),
        "Under denied or notDetermined, userAlert is null for every delivery of push type alert, whichever gating rule decided it (nothing is presented; 17.1's condition is read against these settings)."
    )
    /// Provisional authorization.
    static let provisionalQuiet = Citation(
        .contract(section: "20"),
        "Provisional authorization delivers quietly: to the notification list only, with no banner, sound or badge (Apple: \"delivered quietly … appear in Notification Center\")."
    )
    /// Alerts switched off.
    static let alertsOffShowsNothing = Citation(
        .contract(section: "20"),
        "With alerts off, the system shows nothing that a service extension could change, so it does not launch one (decision); a sound or badge the payload carries still applies as the user's switches allow."
    )
    /// The switches for sounds and badges, in the table's last row.
    static let soundAndBadgeSwitches = Citation(
        .contract(section: "20"),
        "authorized, alerts true | as section 3 | as 17.2, with sound false when sounds is false | as 17.2, unchanged when badges is false | as section 6"
    )
    /// No launch by opening a notification that is not shown.
    static let nothingToOpen = Citation(
        .contract(section: "20"), "denied or notDetermined | does not run: gating rule 3a | null | unchanged | none (nothing is shown to open)")
    /// Background pushes.
    static let backgroundNeedsNoAuthorization = Citation(
        .contract(section: "20"),
        "Background (silent) pushes need no authorization: section 6's callbacks and backgroundDelivery launches are unchanged by every setting."
    )

    // MARK: The service extension's memory (section 22)

    /// What counts towards a chain's memory.
    static let chainMemory = Citation(
        .contract(section: "22"),
        "A chain's memory for one notification is the sum of what its steps hold at once: the content it works on (the payload's serialised bytes), each webhook response body read so far, each decrypted plaintext, each attachment's bytes held in memory (an attachment streamed to the store holds only its buffer), and what an extension written in Swift declares it holds."
    )
    /// The limit and where it is set.
    static let memoryLimit = Citation(
        .contract(section: "22"),
        "dispatch.extensionMemoryLimit: bytes (a positive integer or a size such as 24MiB), default 25165824 (24 MiB) (contract choice: Apple publishes no number); an app or category may set its own extensionMemoryLimit, as for deadline."
    )
    /// A chain stopped for its memory.
    static let memoryStop = Citation(
        .contract(section: "22"),
        "When the memory passes the limit, the chain is stopped at once: disposition original, reason extension-memory-limit, extension as for a run extension with expired false. No best attempt is taken (unlike the deadline)."
    )
    /// What the device does.
    static let memoryKilled = Citation(
        .contract(section: "22"),
        "A notification service extension on the device is killed when its memory passes a limit (crash logs read \"exceeded mem limit: ActiveHard 24 MB\"); the original notification is shown, and no \"time will expire\" call comes first."
    )

    /// The contract's rule behind one validation check.
    static func rule(of check: ValidationCheck) -> Citation {
        let text: String
        switch check {
        case .duplicateHeaders:
            text = "A header whose name begins with apns- appearing more than once (names equal without regard to case, values equal or not) is DuplicateHeaders (400). Other repeated headers (app-state, traceparent, any other): the last wins."
        case .liveActivityPriority: text = "For liveactivity, 1 is BadPriority."
        case .tokenState:
            text = "entry environment present and different from dispatch.environment: BadDeviceToken; entry bundleId present and different from the request's bundle ID (skipped for mdm): DeviceTokenNotForTopic; entry token unregistered: Unregistered (410); expired: ExpiredToken (410). A token with no entry passes."
        case .requestRate:
            text = "When dispatch.tooManyRequests is set, a device request that passed every other check is dead lettered with TooManyRequests (dlq-status 429) when at least limit requests to the same normalised token were already accepted in the window (now − window, now]. Only accepted requests count."
        case .deviceToken:
            text = "hexadecimal, even length, 64 to 200 characters (32 to 100 bytes), case-insensitive, normalised to lowercase. Missing or empty: MissingDeviceToken. Otherwise invalid: BadDeviceToken."
        case .topicPresent: text = "required; missing or empty: MissingTopic."
        case .pushTypeHeader: text = "optional. One of table 1.1, else InvalidPushType."
        case .messageIDHeader: text = "optional. Canonical UUID 8-4-4-4-12 hex, else BadMessageId; normalised to lowercase."
        case .priorityHeader: text = "One of 10, 5, 1, else BadPriority."
        case .expirationHeader: text = "optional. A non-negative integer (UNIX seconds), else BadExpirationDate."
        case .collapseIDHeader: text = "optional (empty counts as absent), at most 64 bytes, else BadCollapseId."
        case .appStateHeader:
            text = "optional override: foreground, background, suspended, notRunning, forceQuit; any other value: BadAppState."
        case .payloadPresent: text = "Empty value: PayloadEmpty."
        case .payloadSize: text = "Larger than the limit: PayloadTooLarge (status 413)."
        case .payloadValid:
            text = "Not a JSON object, or aps missing or not an object: InvalidPayload. Nesting deeper than 512 levels is InvalidPayload too."
        case .backgroundPriority: text = "Push type background with priority 10: BadPriority."
        case .topicSuffix:
            text = "topic: a topic ending in a known suffix other than its push type's, or lacking its push type's suffix: BadTopic"
        case .topicAllowed:
            text = "then the bundle ID (the topic less its suffix) not configured under apps while apps is non-empty: TopicDisallowed (skipped for mdm, whose topic is an MDM identifier and which no app settings apply to)."
        case .badgeIncrementHeader:
            text = "The request header badge-increment: an integer in decimal (an optional + or -, then digits), from -9999 to 9999, not 0. Another value is BadBadgeIncrement (400) (product reason), checked in section 1's step 3 after app-state."
        case .badgeIncrementAllowed:
            text = "After the topic checks (step 6) and before the token checks (step 7), a request with the header is BadBadgeIncrement also when its app has no ledger, when its push type is not alert, or when its payload has aps.badge; dlq-detail says which."
        }
        let section =
            switch check {
            case .payloadPresent, .payloadSize, .payloadValid: "2"
            case .tokenState: "12.1"
            case .requestRate: "12.3"
            case .badgeIncrementHeader, .badgeIncrementAllowed: "21.1"
            default: "1"
            }
        return Citation(.contract(section: section), text)
    }

    /// The contract's row of the app-side table (section 6) that `rule` names, as the table writes it.
    static func row(of rule: AppSideRule) -> Citation {
        let text: String
        switch rule {
        case .foreground: text = "foreground | — | FCH, else the legacy method if implemented, else null | none | as decided"
        case .backgroundContentAvailable: text = "background, suspended | content-available is 1 | FCH, else null | none | as decided"
        case .backgroundOtherwise: text = "background, suspended | otherwise | null | none | as decided"
        case .notRunningContentAvailable: text = "notRunning | content-available is 1 | FCH, else null | backgroundDelivery | as decided"
        case .notRunningAlertText: text = "notRunning | has alert text | null | userOpensNotification | as decided"
        case .notRunningOtherwise: text = "notRunning | otherwise | null | none | as decided"
        case .forceQuitSilent: text = "forceQuit | silent | null | none | discarded, app-force-quit"
        case .forceQuitAlertText: text = "forceQuit | has alert text | null | userOpensNotification | as decided"
        case .forceQuitOtherwise: text = "forceQuit | otherwise | null | none | as decided"
        case .voip, .otherPushType: return voipAndOthers
        }
        return Citation(.contract(section: "6"), text)
    }

    // MARK: The product's own decisions

    /// A modified delivery too large to write.
    static let outputTooLarge = Citation(
        .docs(page: "docs/rules.md"),
        "a modified delivery whose record would be larger than kafka.maxMessageBytes becomes original, output-too-large (outcome output-too-large), as Apple shows the original when an extension fails"
    )
    /// A valid request whose outputs cannot be written.
    static let outputRejected = Citation(
        .docs(page: "docs/rules.md"),
        "a delivery that does not fit even with the original content makes the request an OutputRejected dead letter.")
}
