import Dispatcher
import Foundation
import Notifications

/// The dispatchers an input is decided by: the configuration of `Config/dispatcher.yaml` (the
/// one the samples are written for, built into the binary) and three variations of it that open
/// other branches of the rules. An input chooses one with its first byte (``FuzzInput``).
///
/// Built once per process: a dispatcher holds no mutable state, and building one per input would
/// spend the fuzzer's time in YAML.
enum FuzzDispatchers {
    /// The time of processing of every framed input (section 11.1), fixed so that a run is
    /// repeatable: expiry and the request limit's window are read against it. The samples'
    /// clock (their `timestamp`s start there): 2027-01-15T08:00:00Z.
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// The four dispatchers, by the index an input's options give.
    static let all: [Dispatcher] = (0..<4).map(make)

    /// A validator for each dispatcher, of its profile and apps: the second opinion on a record's
    /// validity (``RecordCheck``).
    static let validators: [RequestValidator] = all.map { dispatcher in
        let configuration = dispatcher.configuration
        return RequestValidator(profile: configuration.dispatch.profile, allowedBundleIDs: Set(configuration.apps.keys))
    }

    /// The sample configuration (0), its `legacy` profile (1), a badge ledger for every app and a
    /// request limit of two a minute (2), and no `apps` at all, where every topic is allowed and no
    /// app's settings apply (3).
    private static func make(_ variant: Int) -> Dispatcher {
        var configuration: Configuration
        do {
            configuration = try Configuration(yaml: String(decoding: PackageResources.dispatcher_yaml, as: UTF8.self))
        } catch {
            // The built-in configuration is the repository's own: it loads, or nothing can be fuzzed.
            preconditionFailure("Config/dispatcher.yaml does not load: \(error)")
        }
        switch variant {
        case 1:
            configuration.dispatch.profile = .legacy
        case 2:
            for bundleID in configuration.apps.keys { configuration.apps[bundleID]?.badgeLedger = true }
            configuration.dispatch.tooManyRequests = RequestRateLimit(limit: 2, window: .seconds(60))
            // Small tables, so that a few records of one input can fill them (ServiceUnavailable).
            configuration.dispatch.stateLimits.activities = 2
            configuration.dispatch.stateLimits.stored = 2
            configuration.dispatch.stateLimits.badges = 2
        case 3:
            configuration.apps = [:]
        default:
            break
        }
        do {
            return try Dispatcher(configuration: configuration, registry: registry, now: { now })
        } catch {
            preconditionFailure("the fuzzing configuration \(variant) is refused: \(error)")
        }
    }

    /// The extension kinds the sample configuration names (`rewrite`), registered as a step that
    /// hands the content back unchanged: the fuzzer stops where the rules decide that an extension
    /// runs (``RecordCheck``), so no step is ever run, and the built-in kinds (and SwiftNIO with
    /// them) stay out of this binary.
    private static var registry: ExtensionRegistry {
        var registry = ExtensionRegistry()
        registry.register(kind: "rewrite") { _ in { UnchangedExtension() } }
        return registry
    }
}
