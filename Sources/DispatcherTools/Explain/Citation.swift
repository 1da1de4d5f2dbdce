import Dispatcher

/// A sentence a decision rests on, quoted word for word: from Apple's documentation, from the
/// product's contract (SEMANTICS.md) or, for the product's own decisions, from its docs.
package struct Citation: Sendable, Hashable {
    /// Where a quoted sentence comes from.
    package enum Source: Sendable, Hashable {
        /// A page of Apple's developer documentation.
        case apple(page: String, url: String)
        /// A section of SEMANTICS.md, the product's delivery contract.
        case contract(section: String)
        /// A page of this project's documentation (decisions the contract leaves open).
        case docs(page: String)
    }

    /// Where the sentence comes from.
    package let source: Source
    /// The sentence, as written there (Markdown marks and links removed).
    package let text: String

    /// Creates a citation.
    package init(_ source: Source, _ text: String) {
        self.source = source
        self.text = text
    }

    /// The source in a few words: `Apple, UNNotificationServiceExtension`, `SEMANTICS.md §4`, `docs/rules.md`.
    package var attribution: String {
        switch source {
        case .apple(let page, _): "Apple, \(page)"
        case .contract(let section): "SEMANTICS.md §\(section)"
        case .docs(let page): page
        }
    }

    /// The source's address, when it has one on the web.
    package var url: String? {
        if case .apple(_, let url) = source { return url }
        return nil
    }
}
