/// Ended activities by dismissal date, earliest first: a binary min-heap of `(dismissalDate,
/// token)`. Entries are not removed when their activity changes; the reader checks each against the
/// table (lazy deletion), so that every change stays O(log n).
struct DismissalQueue: Sendable {
    /// The heap, smallest first by date then token.
    private var heap: [(date: Int64, token: String)] = []

    /// The number of entries, stale ones included.
    var count: Int { heap.count }

    /// Adds `token`, dismissed at `date`.
    mutating func insert(_ token: String, date: Int64) {
        heap.append((date, token))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.less(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// The earliest entry, without removing it.
    var first: (date: Int64, token: String)? { heap.first }

    /// Removes the earliest entry.
    mutating func removeFirst() {
        guard !heap.isEmpty else { return }
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, Self.less(heap[left], heap[smallest]) { smallest = left }
            if right < heap.count, Self.less(heap[right], heap[smallest]) { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }

    /// Drops every entry.
    mutating func removeAll() { heap.removeAll() }

    private static func less(_ a: (date: Int64, token: String), _ b: (date: Int64, token: String)) -> Bool {
        a.date != b.date ? a.date < b.date : a.token < b.token
    }
}
