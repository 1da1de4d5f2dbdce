import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The directory downloaded media is kept in, each file named by its SHA-256 and format
/// (`<sha256>.jpg`), so the same media downloaded twice is stored once.
struct AttachmentStore: Sendable {
    /// The directory.
    let directory: URL

    /// Stores `media` (unless a file of that content is already there) and returns its file URL.
    ///
    /// The file is written under a temporary name and renamed into place, so a reader never sees a
    /// partial file, and concurrent downloads of the same media do not clash.
    func store(_ media: MediaDownload) async throws(AttachmentError) -> URL {
        let directory = directory
        let result: Result<URL, AttachmentError> = await BlockingCall.run {
            let final = directory.appendingPathComponent("\(media.sha256).\(media.format.fileExtension)")
            if FileManager.default.fileExists(atPath: final.path) { return .success(final) }
            let partial = directory.appendingPathComponent(".\(media.sha256).\(UUID().uuidString).partial")
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                try Data(media.bytes).write(to: partial)
                if rename(partial.path, final.path) != 0 {
                    let code = errno
                    try? FileManager.default.removeItem(at: partial)
                    return .failure(.storeFailed("cannot rename into place: \(String(cString: strerror(code)))"))
                }
                return .success(final)
            } catch {
                try? FileManager.default.removeItem(at: partial)
                return .failure(.storeFailed(error.localizedDescription))
            }
        }
        return try result.get()
    }
}
