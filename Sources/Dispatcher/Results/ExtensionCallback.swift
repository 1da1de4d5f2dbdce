/// The content extension method the system calls for a response (SEMANTICS section 10); its raw
/// value is the method's Swift name as written in the action record.
public enum ExtensionCallback: String, Sendable, Hashable, CaseIterable {
    /// `didReceive(_:completionHandler:)`: a custom action.
    case didReceive = "didReceive(_:completionHandler:)"
    /// `mediaPlay()`: the media button, to play.
    case mediaPlay = "mediaPlay()"
    /// `mediaPause()`: the media button, to pause.
    case mediaPause = "mediaPause()"
}
