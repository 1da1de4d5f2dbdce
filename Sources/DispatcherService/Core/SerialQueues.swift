/// Runs items with the same key one after another, in arrival order, and items with different keys
/// independently.
///
/// The worker uses it for per-device ordering: a record whose key already has a record running
/// waits in that key's queue; when the running one finishes, its runner takes the next. A key's
/// queue exists only while it has work, so memory follows the records in flight, not the number of
/// devices ever seen.
struct SerialQueues<Key, Item>: Sendable where Key: Hashable & Sendable, Item: Sendable {
    /// A key with a running item: the items waiting behind it.
    private struct Entry: Sendable {
        var items = FIFO<Item>()
        /// True only within the lookup that inserted the entry (``activateOrWait(_:_:)``): the
        /// key was idle.
        var isNew: Bool
    }

    /// Keys with a running item.
    private var waiting: [Key: Entry] = [:]

    /// How many keys have an item running.
    var activeKeys: Int { waiting.count }

    /// Offers an item. Returns it back when it may start now (nothing of its key is running);
    /// otherwise keeps it until the running item of its key finishes.
    mutating func enqueue(_ item: Item, key: Key) -> Item? {
        activateOrWait(key) { item } ? item : nil
    }

    /// Marks `key` as running an item this queue does not hold (a record decided in place) when
    /// nothing of it runs; otherwise keeps the item `waiting` makes, behind the key's others.
    /// One lookup of the key, where asking whether it runs, then marking it, made two.
    /// - Returns: whether the key was idle (the item may start now; ``next(after:)`` is then
    ///   called when it finishes).
    mutating func activateOrWait(_ key: Key, _ item: () -> Item) -> Bool {
        func activateOrWait(_ entry: inout Entry) -> Bool {
            if entry.isNew {
                entry.isNew = false
                return true
            }
            entry.items.push(item())
            return false
        }
        // The defaulted subscript finds or inserts in one probe; an inserted entry is new.
        return activateOrWait(&waiting[key, default: Entry(isNew: true)])
    }

    /// Called when the running item of `key` finished: returns the next item of that key to run,
    /// or `nil` when the key has nothing more (the key is then idle).
    mutating func next(after key: Key) -> Item? {
        guard let index = waiting.index(forKey: key) else { return nil }
        // Popped in place through the dictionary's values: a copy taken out would share the
        // queue's storage with the dictionary and copy all of it on the first change.
        if let item = waiting.values[index].items.pop() { return item }
        waiting.remove(at: index)
        return nil
    }

    /// Removes and returns every waiting item that matches, leaving running items, and the
    /// others waiting in their order, alone.
    ///
    /// Used when partitions are revoked or lost: their queued records must not start. It asks
    /// each item, not each key: records of two topics may share a key (``WorkerCore``'s shared
    /// ordering), and only the revoked partition's leave.
    mutating func removeWaiting(where shouldRemove: (Item) -> Bool) -> [Item] {
        var removed: [Item] = []
        for index in waiting.indices {
            var kept = FIFO<Item>()
            while let item = waiting.values[index].items.pop() {
                if shouldRemove(item) { removed.append(item) } else { kept.push(item) }
            }
            waiting.values[index].items = kept
        }
        return removed
    }
}
