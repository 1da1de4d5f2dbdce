import ArgumentParser
import JSON

/// The app state the benchmarks' apps are configured in (their `defaultAppState`): the records
/// stay the same, only what the worker decides for them changes.
enum BenchAppState: String, CaseIterable, ExpressibleByArgument, Sendable {
    /// On screen: what the user sees is decided by `willPresent` (SEMANTICS section 17).
    case foreground
    /// Running, not on screen: the default of the benchmarks' apps.
    case background
}

/// What `compare` and `counts` feed every contender besides the record count: the same
/// preloaded records for `serve`, the C floor and the Python worker, whose JSON style and devices
/// these options choose, and the app state their configurations give the apps.
struct BenchInputOptions: ParsableArguments {
    /// The request values' spacing.
    @Option(help: "The request values' JSON style: compact (no whitespace), spaced (Python's json.dumps default: a space after every , and :) or pretty (json.dumps with indent=2). The values keep their sizes.")
    var jsonStyle: JSONStyle = .compact

    /// How many devices the requests go to, in turn; 0 for one of its own per request.
    @Option(help: "Send the requests to this many devices in turn, so that a device's records wait for each other; 0: a device of its own for every request.")
    var devices: Int = 0

    /// The apps' `defaultAppState`.
    @Option(help: "The apps' defaultAppState in serve's configuration, and the Python worker's: foreground or background. The records stay the same.")
    var appState: BenchAppState = .background

    /// Refuses a negative device count.
    func validate() throws {
        guard devices >= 0 else { throw ValidationError("--devices must not be negative") }
    }

    /// The realistic requests these options describe.
    func requests(count: Int) -> [BenchRequest] {
        BenchRequest.realistic(count: count, style: jsonStyle, devices: devices)
    }

    /// What was fed, for the report.
    var summary: String {
        let devices = devices == 0 ? "a device of its own for every request" : "\(devices) devices in turn"
        return "JSON \(jsonStyle.rawValue), \(devices), apps in the \(appState.rawValue)"
    }

    /// The options, for the JSON results.
    var json: [(String, JSONValue)] {
        [("jsonStyle", .string(jsonStyle.rawValue)), ("devices", .number(JSONNumber(devices))), ("appState", .string(appState.rawValue))]
    }
}
