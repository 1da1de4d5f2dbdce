import BlockingWork
import Foundation
import NIOCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file of the attachment store that a download is still writing, under a hidden temporary name
/// (`.<uuid>.partial`) until it is complete and renamed into place.
///
/// It owns its file descriptor: closed by ``closeFile()`` or, as a safety net, in `deinit`. The file
/// itself is removed or renamed by its store (``AttachmentStore/discard(_:)``, ``AttachmentStore/keep(_:sha256:format:)``).
final class PartialFile: Sendable {
    /// The file's name inside the store directory.
    let name: String
    /// The file's URL.
    let url: URL
    /// The open descriptor, -1 once closed. Behind a lock although one download uses it at a
    /// time: its writes run on a Dispatch thread while the download awaits them.
    private let descriptor: Mutex<Int32>

    /// The name pattern of partial files: hidden, and never the name of a finished file.
    static let suffix = ".partial"

    /// Creates and opens a new, empty file in `directory` (blocking: call off the cooperative pool).
    static func create(in directory: URL) -> Result<PartialFile, AttachmentError> {
        let name = ".\(UUID().uuidString)\(suffix)"
        let url = directory.appendingPathComponent(name)
        let fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return .failure(.storeFailed("cannot create a file: \(String(cString: strerror(errno)))")) }
        return .success(PartialFile(name: name, url: url, descriptor: fd))
    }

    private init(name: String, url: URL, descriptor: Int32) {
        self.name = name
        self.url = url
        self.descriptor = Mutex(descriptor)
    }

    deinit {
        descriptor.withLock { fd in
            if fd >= 0 { _ = close(fd) }
        }
    }

    /// Appends `bytes` to the file, off the cooperative pool.
    func append(_ bytes: ByteBuffer) async throws(AttachmentError) {
        let result: Result<Void, AttachmentError> = await BlockingWork.run { self.writeBlocking(bytes) }
        try result.get()
    }

    /// Closes the descriptor (blocking; idempotent).
    func closeFile() {
        descriptor.withLock { fd in
            if fd >= 0 { _ = close(fd) }
            fd = -1
        }
    }

    /// Writes all of `bytes`, retrying short and interrupted writes.
    private func writeBlocking(_ bytes: ByteBuffer) -> Result<Void, AttachmentError> {
        descriptor.withLock { fd in
            guard fd >= 0 else { return .failure(.storeFailed("the file was closed")) }
            return bytes.withUnsafeReadableBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        return .failure(.storeFailed("cannot write the file: \(String(cString: strerror(errno)))"))
                    }
                    offset += written
                }
                return .success(())
            }
        }
    }
}
