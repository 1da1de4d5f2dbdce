/// Runs `body` with `resource`, then awaits `cleanUp(resource)` whether `body` returned or threw:
/// the clean-up an async test cannot write as `defer` (a `defer { Task { ... } }` is never
/// awaited, so the next test may start while this one's resources still run).
public func withCleanUp<Resource, Result>(
    of resource: Resource,
    _ cleanUp: (Resource) async -> Void,
    _ body: (Resource) async throws -> Result
) async throws -> Result {
    let result: Result
    do {
        result = try await body(resource)
    } catch {
        await cleanUp(resource)
        throw error
    }
    await cleanUp(resource)
    return result
}
