/// What the checks of one input found wrong, in words: empty when the input ended well.
struct Findings {
    /// One sentence per broken expectation, in the order found.
    private(set) var messages: [String] = []

    /// Whether nothing was found.
    var isEmpty: Bool { messages.isEmpty }

    /// Notes a broken expectation.
    mutating func fail(_ message: String) {
        messages.append(message)
    }
}
