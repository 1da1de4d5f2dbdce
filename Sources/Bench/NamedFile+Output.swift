import ArgumentParser
import DispatcherTools

extension NamedFile {
    /// Checks, as a command's `validate()`, that a results file can be written at `path` (when
    /// given), so a long run does not fail at its end.
    /// - Throws: `ValidationError` naming the path and `option`.
    static func validateOutput(_ path: String?, role: String, option: String) throws {
        guard let path else { return }
        do {
            try NamedFile(role: role, path: path, option: option).requireWritableLocation()
        } catch {
            throw ValidationError(error.description)
        }
    }
}
