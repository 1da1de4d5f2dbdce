import Dispatcher

/// `explain`'s output for a person: the outcome first, then each stage with its lines and quotes,
/// then lint's warnings (a request's).
extension Explanation {
    /// The explanation as text, lines at most `width` columns where words allow.
    /// - Parameters:
    ///   - input: what was explained, in a few words (`line 3 of alerts.jsonl`).
    ///   - notes: what reading the input filled in or changed (a stand-in token, a header from a flag).
    package func text(input: String, notes: [String] = [], width: Int = 100) -> String {
        var out: [String] = ["Explaining \(input)"]
        for note in notes { out += Self.wrap("Note: " + note, width: width, indent: "", continuation: "  ") }
        out.append("")
        out += Self.wrap("Outcome: " + outcome, width: width, indent: "", continuation: "  ")
        out += Self.wrap("Records: " + Self.summary(of: outputs), width: width, indent: "", continuation: "  ")
        for (number, step) in steps.enumerated() {
            out.append("")
            out += Self.wrap("\(number + 1). \(step.title): \(step.verdict)", width: width, indent: "", continuation: "   ")
            for line in step.lines {
                let mark = Self.mark(line.mark, in: step.kind)
                out += Self.wrap(line.text, width: width, indent: "   \(mark) ", continuation: "     ")
            }
            for citation in step.citations {
                out += Self.quote(citation, width: width, indent: "     ")
            }
        }
        out.append("")
        if isResponse {
            out.append("Lint: not applicable (it checks requests' payloads).")
        } else if warnings.isEmpty {
            out.append("Lint: no warnings.")
        } else {
            out.append("Lint: \(warnings.count) warning\(warnings.count == 1 ? "" : "s")")
            for warning in warnings {
                out += Self.wrap("\(warning.code.rawValue): \(warning.message)", width: width, indent: "   ! ", continuation: "     ")
                out += Self.wrap("Fix: \(warning.fix)", width: width, indent: "     ", continuation: "     ")
                for citation in warning.citations { out += Self.quote(citation, width: width, indent: "     ") }
            }
        }
        return out.joined(separator: "\n") + "\n"
    }

    /// The records in a few words: `delivery to notifications.deliveries, then launch to ...`.
    static func summary(of outputs: [OutputRecord]) -> String {
        guard !outputs.isEmpty else { return "none" }
        return outputs.map { "\($0.kind.description) to \($0.topic)" }.joined(separator: ", then ")
    }

    /// The mark before a line: ✓ passed, ✗ or → decided (a failed check, a rule that applied),
    /// – not reached, · a fact.
    private static func mark(_ mark: ExplanationStep.Line.Mark, in kind: ExplanationStep.Kind) -> String {
        switch mark {
        case .passed: "✓"
        case .decided: kind == .validation || kind == .outputs ? "✗" : "→"
        case .notReached: "–"
        case .note: "·"
        }
    }

    /// A quoted sentence and its source, wrapped.
    private static func quote(_ citation: Citation, width: Int, indent: String) -> [String] {
        var lines = wrap("“\(citation.text)”", width: width, indent: indent, continuation: indent + " ")
        lines.append(indent + "  — " + citation.attribution + (citation.url.map { " <\($0)>" } ?? ""))
        return lines
    }

    /// `text` broken at spaces into lines of at most `width` columns (a longer word keeps its own
    /// line), the first line after `indent`, the others after `continuation`.
    static func wrap(_ text: String, width: Int, indent: String, continuation: String) -> [String] {
        var lines: [String] = []
        var current = indent
        var currentIsEmpty = true
        for word in text.split(separator: " ", omittingEmptySubsequences: true) {
            if !currentIsEmpty, current.count + 1 + word.count > width {
                lines.append(current)
                current = continuation
                currentIsEmpty = true
            }
            current += (currentIsEmpty ? "" : " ") + word
            currentIsEmpty = false
        }
        lines.append(current)
        return lines
    }
}
