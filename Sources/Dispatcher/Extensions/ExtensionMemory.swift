import JSON
import Notifications
import Synchronization

/// What a service extension step holds in memory for one notification, declared to the chain that
/// runs it (SEMANTICS section 22): a notification service extension on a device is killed when its
/// memory passes a limit, and the dispatcher models that for the chains it runs.
///
/// A chain's memory is the content it works on (the payload's serialised bytes, and its
/// attachments') plus what the running step declares here: a response body read, a decrypted
/// plaintext, a download's buffer, a model loaded by your own Swift code. When the sum passes the
/// chain's `extensionMemoryLimit`, the chain is stopped at once, as the system kills an extension:
/// the original is delivered with reason `extension-memory-limit`, no best attempt is asked for,
/// and ``hold(_:)`` throws so that the step's code unwinds.
///
/// What a step declares is released when it finishes (the content it hands on is measured as the
/// next step's content). ``release(_:)`` gives bytes back earlier, for a step that frees a buffer
/// before it ends.
///
/// - Important: declare before you allocate, and ask ``available`` to bound what you read: the
///   limit also bounds what the worker holds for one notification.
public final class ExtensionMemory: Sendable {
    /// The chain's limit, in bytes (`extensionMemoryLimit`).
    public let limit: Int
    /// The chain whose memory this is, and the step that declares through it.
    private let account: any ExtensionMemoryAccount
    private let step: Int

    /// The memory of step `step` of a chain counted by `account`.
    init(account: any ExtensionMemoryAccount, step: Int) {
        self.account = account
        self.step = step
        self.limit = account.limit
    }

    /// A memory of its own, outside any chain (a step called directly, in a test): it counts from
    /// `content` bytes and throws as a chain's does, but stops nothing.
    package convenience init(limit: Int, content: Int = 0) {
        self.init(account: StandaloneMemory(limit: limit, content: content), step: 0)
    }

    /// What the chain holds now: its content and what the running step declared.
    public var held: Int { account.held }

    /// What the step may still hold before the chain passes its limit (0 when it is at it).
    public var available: Int { max(0, limit - held) }

    /// Declares that the step now holds `bytes` more.
    ///
    /// - Throws: ``ExtensionMemoryLimitExceeded`` when the chain's memory passes its limit with
    ///   them: the chain has then been stopped (its delivery is decided without this step), and
    ///   the step should stop too. A step that is no longer running (its chain ended) declares
    ///   nothing.
    public func hold(_ bytes: Int) throws(ExtensionMemoryLimitExceeded) {
        guard bytes > 0 else { return }
        if case .passed(let total) = account.hold(bytes, step: step) {
            throw ExtensionMemoryLimitExceeded(held: total, limit: limit)
        }
    }

    /// Declares that the step no longer holds `bytes` of what it declared.
    public func release(_ bytes: Int) {
        guard bytes > 0 else { return }
        account.release(bytes, step: step)
    }

    /// The bytes `content` holds as a chain's content: its payload's compact serialisation and
    /// each attachment's (section 22: "the content it works on (the payload's serialised bytes)";
    /// an attachment's file is on disk, only its description is in memory).
    package static func bytes(of content: NotificationContent) -> Int {
        JSONValue.object(content.payload).serialized().count + attachmentBytes(content.attachments)
    }

    /// ``bytes(of:)`` of validated content, without serialising a payload that keeps its bytes.
    static func bytes(of content: ValidatedContent) -> Int {
        content.payload.serializedCount + attachmentBytes(content.attachments)
    }

    private static func attachmentBytes(_ attachments: [JSONObject]) -> Int {
        attachments.reduce(0) { $0 + JSONValue.object($1).serialized().count }
    }
}

/// The chain's memory passed its limit (SEMANTICS section 22): the chain was stopped, and the
/// original is delivered with reason `extension-memory-limit`.
public struct ExtensionMemoryLimitExceeded: ServiceExtensionError, CustomStringConvertible {
    /// What the chain would have held with the bytes declared.
    public let held: Int
    /// The chain's limit.
    public let limit: Int

    /// The failure's kind in log lines.
    public var kind: String { Self.kindName }

    /// The kind of every stop for memory, in log lines.
    static let kindName = "extension-memory-limit"

    public var description: String {
        "the chain would hold \(held) bytes, over its memory limit of \(limit) bytes (extensionMemoryLimit)"
    }
}

/// Where a step's declarations are counted: a chain's run, or a standalone count.
protocol ExtensionMemoryAccount: Sendable {
    /// The limit, in bytes.
    var limit: Int { get }
    /// What is held now.
    var held: Int { get }
    /// Adds `bytes` held by `step`.
    func hold(_ bytes: Int, step: Int) -> MemoryHold
    /// Takes back `bytes` held by `step`.
    func release(_ bytes: Int, step: Int)
}

/// What a declaration did.
enum MemoryHold {
    /// Counted, within the limit.
    case held
    /// Counted, and the total passed the limit: the chain is stopped.
    case passed(total: Int)
    /// Not counted: the step no longer runs.
    case ignored
}

/// A step's bytes as the chain counts them: the content's, the running step's number and what it
/// declared. Held in the chain's state, under its lock.
struct ChainMemoryState: Sendable {
    /// The bytes of the content the running step works on.
    var content: Int
    /// The running step's position in the chain, -1 before the first.
    var step = -1
    /// What the running step declared and did not release.
    var held = 0

    /// The total.
    var total: Int { content + held }

    /// Adds `bytes` to what the step holds, without overflowing.
    mutating func add(_ bytes: Int) {
        held = held > Int.max - bytes ? Int.max - content : held + bytes
    }
}

/// A count outside any chain: ``ExtensionMemory/init(limit:content:)``.
private final class StandaloneMemory: ExtensionMemoryAccount {
    let limit: Int
    private let state: Mutex<ChainMemoryState>

    init(limit: Int, content: Int) {
        self.limit = limit
        self.state = Mutex(ChainMemoryState(content: content, step: 0))
    }

    var held: Int { state.withLock { $0.total } }

    func hold(_ bytes: Int, step: Int) -> MemoryHold {
        state.withLock { memory in
            memory.add(bytes)
            return memory.total > limit ? .passed(total: memory.total) : .held
        }
    }

    func release(_ bytes: Int, step: Int) {
        state.withLock { $0.held = max(0, $0.held - bytes) }
    }
}
