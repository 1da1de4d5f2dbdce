/// Where routing (SEMANTICS section 4) sent a request that gating let through: which service
/// extension, from which setting, and the deadline and memory limit (section 22) it has.
package struct ExtensionRoute: Sendable, Hashable {
    /// Which setting chose the extension, or why there is none.
    package enum Choice: Sendable, Hashable {
        /// `categories.<category>.serviceExtension` of the app.
        case category(String)
        /// The app's own `serviceExtension` (the category, if any, sets none of its own).
        case app
        /// `categories.<category>.serviceExtension: none` opts the category out of the app's extension.
        case categoryOptedOut(String)
        /// Neither the category nor the app sets a service extension.
        case appHasNone
        /// The bundle ID is not configured under `apps` (or the push is `mdm`, which no app settings apply to).
        case appNotConfigured
    }

    /// Which setting chose the extension, or why there is none.
    package var choice: Choice
    /// The report name of the chain (step names joined with `+`); nil when there is no extension.
    package var chainName: String?
    /// The deadline the chain has.
    package var deadline: Duration
    /// Which setting gave the deadline.
    package var deadlineSource: DeadlineSource
    /// The bytes the chain may hold at once (`extensionMemoryLimit`, section 22).
    package var memoryLimit: Int
    /// Which setting gave the memory limit: the same three places as the deadline's.
    package var memoryLimitSource: DeadlineSource

    /// Which setting gave a chain its deadline (or its memory limit): the category's, else the
    /// app's, else the `dispatch` section's.
    package enum DeadlineSource: Sendable, Hashable {
        /// `categories.<category>.deadline` (or `.extensionMemoryLimit`).
        case category(String)
        /// The app's `deadline` (or `extensionMemoryLimit`).
        case app
        /// `dispatch.deadline` (or `dispatch.extensionMemoryLimit`).
        case dispatch
    }

    /// Whether an extension runs (rule 5 of gating does not apply).
    package var hasExtension: Bool { chainName != nil }
}
