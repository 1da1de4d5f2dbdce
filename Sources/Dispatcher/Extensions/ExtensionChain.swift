/// A configured `serviceExtension` ready to run: its steps' names and instance makers.
struct ExtensionChain: Sendable {
    /// One step: its name in reports and the maker of its per-request instances.
    struct Step: Sendable {
        /// The step's name in reports.
        let name: String
        /// Makes the step's per-request instance.
        let make: ExtensionRegistry.Maker
    }

    /// The steps in order; never empty.
    let steps: [Step]

    /// The report name: the step names joined with `+` (joined once: every routed request reports it).
    let name: String

    /// Builds the chain of `steps` from `registry`, checking every kind and its options.
    init(_ steps: [ExtensionStep], registry: ExtensionRegistry) throws(ConfigurationError) {
        var built: [Step] = []
        for step in steps {
            built.append(Step(name: step.name, make: try registry.maker(for: step)))
        }
        self.steps = built
        self.name = built.map(\.name).joined(separator: "+")
    }
}
