import BlockingWork
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The directory downloaded media is kept in, each file named by its SHA-256 and format
/// (`<sha256>.jpg`), so the same media downloaded twice is stored once; and its retention, which
/// keeps the directory within an age and a total size while the service runs.
///
/// A download writes into a ``PartialFile`` and hands it to ``keep(_:sha256:format:)``, which
/// renames it into place, so a reader never sees a partial file. Files in use (being written, or
/// being put in place) are never removed by a sweep; everything else of the store's naming
/// (finished files and partial files left by a crash) is removed when older than the retention's
/// age, and finished files oldest first while the store is over its size. Files of other names are
/// neither counted nor touched.
final class AttachmentStore: Sendable {
    /// The directory.
    let directory: URL
    /// What the store keeps.
    let retention: AttachmentRetention
    private let state = Mutex(State())

    /// What the store knows between file operations.
    private struct State {
        /// Names of files in use: partial files being written, finished names being put in place.
        var inUse: Set<String> = []
        /// When the last sweep ended; nil before the first.
        var lastSweep: ContinuousClock.Instant?
        /// Whether a sweep is running (one at a time).
        var sweeping = false
        /// The store's size as the last sweep left it, plus what was stored since.
        var estimatedBytes = 0
    }

    /// A store in `directory` (which must exist) keeping what `retention` allows.
    init(directory: URL, retention: AttachmentRetention) {
        self.directory = directory
        self.retention = retention
    }

    /// A new, empty partial file, in use until it is kept or discarded.
    func createPartial() async throws(AttachmentError) -> PartialFile {
        let directory = directory
        let created: Result<PartialFile, AttachmentError> = await BlockingWork.run { PartialFile.create(in: directory) }
        let file = try created.get()
        state.withLock { _ = $0.inUse.insert(file.name) }
        return file
    }

    /// Puts the complete `file` in place as `<sha256>.<extension>` and returns its URL; then sweeps
    /// when the store has grown past its size or a sweep is due.
    ///
    /// When a file of that content is already there, it is kept and marked as used now (so age
    /// counts from its last use) and `file` is removed.
    func keep(_ file: PartialFile, sha256: String, format: MediaFormat) async throws(AttachmentError) -> URL {
        let finalName = "\(sha256).\(format.fileExtension)"
        let final = directory.appendingPathComponent(finalName)
        state.withLock { _ = $0.inUse.insert(finalName) }
        let placed: Result<Int, AttachmentError> = await BlockingWork.run { Self.place(file, at: final) }
        let due = state.withLock { state in
            state.inUse.remove(finalName)
            state.inUse.remove(file.name)
            if case .success(let added) = placed { state.estimatedBytes += added }
            return isSweepDue(state)
        }
        _ = try placed.get()
        if due { await sweep() }
        return final
    }

    /// Removes `file` (a download that failed or was abandoned); idempotent.
    func discard(_ file: PartialFile) async {
        await BlockingWork.run {
            file.closeFile()
            _ = unlink(file.url.path)
        }
        state.withLock { _ = $0.inUse.remove(file.name) }
    }

    /// Sweeps when one is due: never before, or longer ago than the retention's interval.
    func sweepIfDue() async {
        if state.withLock({ isSweepDue($0) }) { await sweep() }
    }

    /// Removes what the retention does not keep, as of `now` (a sweep already running makes this
    /// one return at once, with nothing removed).
    /// - Returns: the names removed, oldest first.
    @discardableResult
    func sweep(now: Date = Date()) async -> [String] {
        let started = state.withLock { state in
            guard !state.sweeping else { return false }
            state.sweeping = true
            return true
        }
        guard started else { return [] }
        let (removed, remaining) = await BlockingWork.run { self.sweepBlocking(now: now) }
        state.withLock { state in
            state.sweeping = false
            state.lastSweep = .now
            state.estimatedBytes = remaining
        }
        return removed
    }

    /// Whether a sweep should run now: the store is over its size, or a sweep is due by time.
    private func isSweepDue(_ state: State) -> Bool {
        guard !state.sweeping else { return false }
        guard let last = state.lastSweep else { return true }
        return state.estimatedBytes > retention.maxTotalBytes || ContinuousClock.now - last >= retention.sweepInterval
    }

    /// One file of the store's naming, as a sweep found it.
    private struct Entry {
        let name: String
        let bytes: Int
        let modified: timespec
        let inode: UInt64
        let isPartial: Bool
    }

    /// The sweep itself (blocking): the names removed and the bytes of finished files that remain.
    private func sweepBlocking(now: Date) -> (removed: [String], remaining: Int) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var entries = names.compactMap { name -> Entry? in
            let isPartial = name.hasPrefix(".") && name.hasSuffix(PartialFile.suffix)
            guard isPartial || Self.isStoredName(name), let info = fileStatus(name) else { return nil }
            return Entry(
                name: name, bytes: Int(info.st_size), modified: info.modified, inode: UInt64(info.st_ino), isPartial: isPartial)
        }
        entries.sort { ($0.modified.tv_sec, $0.modified.tv_nsec) < ($1.modified.tv_sec, $1.modified.tv_nsec) }
        // The size counts finished files: each download in progress adds at most its kind's limit.
        var total = entries.reduce(0) { $0 + ($1.isPartial ? 0 : $1.bytes) }
        let maxAge = retention.maxAge.components.seconds
        let oldestKept = Int(now.timeIntervalSince1970) - Int(maxAge)
        var removed: [String] = []
        for entry in entries {
            let tooOld = entry.modified.tv_sec < oldestKept
            // Over the size, finished files go oldest first; a partial file is someone's download
            // in progress (another process's, should the directory be shared) until it is too old.
            let overSize = total > retention.maxTotalBytes && !entry.isPartial
            guard tooOld || overSize, remove(entry) else { continue }
            if !entry.isPartial { total -= entry.bytes }
            removed.append(entry.name)
        }
        return (removed, total)
    }

    /// Removes `entry` unless it is in use or changed since it was listed (a file just reused or
    /// put in place under that name); whether it was removed.
    private func remove(_ entry: Entry) -> Bool {
        state.withLock { state in
            // Under the lock, so that `keep` cannot start using the name between check and unlink.
            guard !state.inUse.contains(entry.name), let info = fileStatus(entry.name),
                UInt64(info.st_ino) == entry.inode, info.modified.tv_sec == entry.modified.tv_sec,
                info.modified.tv_nsec == entry.modified.tv_nsec
            else { return false }
            return unlink(directory.appendingPathComponent(entry.name).path) == 0
        }
    }

    /// The `lstat` of `name` in the store, nil unless it is a regular file.
    private func fileStatus(_ name: String) -> stat? {
        var info = stat()
        guard lstat(directory.appendingPathComponent(name).path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            return nil
        }
        return info
    }

    /// Whether `name` is a finished file's: 64 hexadecimal digits, a dot and a known extension.
    static func isStoredName(_ name: String) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].utf8.count == 64, parts[0].utf8.allSatisfy({ $0.isHexDigit }) else { return false }
        return MediaFormat.allCases.contains { $0.fileExtension == parts[1] }
    }

    /// Renames `file` to `final`, or when `final` exists, marks it used now and removes `file`
    /// (blocking). Returns the bytes the store grew by.
    private static func place(_ file: PartialFile, at final: URL) -> Result<Int, AttachmentError> {
        file.closeFile()
        // `utimensat` with no times sets both to now: the file counts as used now.
        if utimensat(AT_FDCWD, final.path, nil, 0) == 0 {
            _ = unlink(file.url.path)
            return .success(0)
        }
        var info = stat()
        let size = lstat(file.url.path, &info) == 0 ? Int(info.st_size) : 0
        guard rename(file.url.path, final.path) == 0 else {
            let code = errno
            _ = unlink(file.url.path)
            return .failure(.storeFailed("cannot rename into place: \(String(cString: strerror(code)))"))
        }
        // Age counts from now, not from the last write of a download that took a while.
        _ = utimensat(AT_FDCWD, final.path, nil, 0)
        return .success(size)
    }
}

extension stat {
    /// The time of the last modification.
    fileprivate var modified: timespec {
        #if canImport(Darwin)
        st_mtimespec
        #else
        st_mtim
        #endif
    }
}

extension UInt8 {
    /// Whether this UTF-8 code unit is `0`-`9`, `a`-`f` or `A`-`F`.
    fileprivate var isHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x61...0x66).contains(self) || (0x41...0x46).contains(self)
    }
}
