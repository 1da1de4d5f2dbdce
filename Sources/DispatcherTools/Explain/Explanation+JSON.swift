import Dispatcher
package import JSON
import Notifications

/// `explain --json`: the same explanation as data.
extension Explanation {
    /// The explanation as one JSON object: `input`, `outcome`, `steps`, `warnings` and `outputs`
    /// (the records exactly as `dispatch` writes them).
    /// - Parameter input: what was explained.
    package func json(input: JSONObject) -> JSONValue {
        var outcome = outcomeFacts
        outcome["summary"] = .string(self.outcome)
        let steps: [JSONValue] = steps.map { step in
            [
                "step": .string(step.kind.rawValue), "title": .string(step.title), "verdict": .string(step.verdict),
                "lines": .array(step.lines.map { ["mark": .string($0.mark.rawValue), "text": .string($0.text)] }),
                "facts": .object(step.facts),
                "citations": .array(step.citations.map(Self.json)),
            ]
        }
        let warnings: [JSONValue] = warnings.map { warning in
            [
                "code": .string(warning.code.rawValue), "message": .string(warning.message), "fix": .string(warning.fix),
                "citations": .array(warning.citations.map(Self.json)),
            ]
        }
        let outputs: [JSONValue] = outputs.map { record in
            // The line `dispatch` writes, read back as JSON: both show a record the same way.
            (try? JSONValue(parsing: JSONLines.encode(record), maxDepth: JSONLines.maximumLineDepth)) ?? .null
        }
        return [
            "input": .object(input), "outcome": .object(outcome), "steps": .array(steps), "warnings": .array(warnings),
            "outputs": .array(outputs),
        ]
    }

    /// A citation as data.
    private static func json(_ citation: Citation) -> JSONValue {
        let source: String =
            switch citation.source {
            case .apple: "apple"
            case .contract: "contract"
            case .docs: "docs"
            }
        return [
            "source": .string(source), "attribution": .string(citation.attribution), "url": citation.url.map { .string($0) } ?? .null,
            "text": .string(citation.text),
        ]
    }
}
