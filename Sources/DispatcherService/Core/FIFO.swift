/// A first-in, first-out queue with O(1) amortised push and pop.
///
/// The worker keeps one per ordering key; with `ordering: partition` a queue can hold thousands of
/// records, so `Array.removeFirst` (O(n)) would turn a burst into quadratic work.
struct FIFO<Element>: Sendable where Element: Sendable {
    private var storage: [Element?] = []
    private var head = 0

    /// Whether the queue holds nothing.
    var isEmpty: Bool { head == storage.count }

    /// How many elements the queue holds.
    var count: Int { storage.count - head }

    /// Appends an element at the back.
    mutating func push(_ element: Element) {
        storage.append(element)
    }

    /// Removes and returns the element at the front, if any.
    mutating func pop() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head]
        storage[head] = nil
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 256, head * 2 > storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }
}
