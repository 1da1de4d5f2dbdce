/// Runs items with the same key one after another, in arrival order, and items with different keys
/// independently.
///
/// The worker uses it for per-device ordering: a record whose key already has a record running
/// waits in that key's queue; when the running ones finish, their runner takes the next. A key's
/// queue exists only while it has work, so memory follows the records in flight, not the number of
/// devices ever seen.
///
/// A key may be *open*: its running items were all decided where they lay and only await the
/// acknowledgement of one output each, in the producer's order. Then an item that may be decided
/// the same way starts behind them at once (*pipelined*), rather than waiting for their
/// acknowledgements: the producer keeps their outputs in order (docs/worker.md, "Ordering"). A
/// key is closed as soon as one of its running items turns out to do more (``close(_:)``), and
/// an item taken from the queue always runs alone.
struct SerialQueues<Key, Item>: Sendable where Key: Hashable & Sendable, Item: Sendable {
    /// A key with running items: the items waiting behind them.
    private struct Entry: Sendable {
        var items = FIFO<Item>()
        /// Items of the key started and not finished. An item given up stays counted, so that
        /// its key stays taken.
        var running = 0
        /// Whether an item may start behind the running ones (``activateOrWait(_:pipelines:_:)``).
        var isOpen = false
    }

    /// What became of an item offered to its key.
    enum Start: Sendable, Equatable {
        /// Nothing of its key was running: it runs now.
        case started
        /// It runs now, behind running items of its key that keep it open.
        case pipelined
        /// It waits behind the running items of its key.
        case queued
    }

    /// Keys with a running item.
    private var waiting: [Key: Entry] = [:]

    /// How many keys have an item running.
    var activeKeys: Int { waiting.count }

    /// Offers an item. Returns it back when it may start now (nothing of its key is running);
    /// otherwise keeps it until the running item of its key finishes.
    mutating func enqueue(_ item: Item, key: Key) -> Item? {
        activateOrWait(key) { item } == .queued ? nil : item
    }

    /// Marks `key` as running an item this queue does not hold (a record decided in place) when
    /// nothing of it runs, or, for an item that `pipelines`, when the key is open and nothing
    /// waits; otherwise keeps the item `waiting` makes, behind the key's others. One lookup of
    /// the key.
    /// - Parameter pipelines: whether the item is decided where it lies and keeps the key open
    ///   unless ``close(_:)`` says otherwise.
    /// - Returns: whether it started (``next(after:)`` is then called when it finishes), and how.
    mutating func activateOrWait(_ key: Key, pipelines: Bool = false, _ item: () -> Item) -> Start {
        func activateOrWait(_ entry: inout Entry) -> Start {
            if entry.running == 0 {
                entry.running = 1
                entry.isOpen = pipelines
                return .started
            }
            if pipelines, entry.isOpen, entry.items.isEmpty {
                entry.running += 1
                return .pipelined
            }
            entry.items.push(item())
            return .queued
        }
        // The defaulted subscript finds or inserts in one probe; an inserted entry runs nothing.
        return activateOrWait(&waiting[key, default: Entry()])
    }

    /// Closes `key`: a running item of it does more than await one output's acknowledgement, so
    /// nothing more starts before all of its running items finished.
    mutating func close(_ key: Key) {
        guard let index = waiting.index(forKey: key) else { return }
        waiting.values[index].isOpen = false
    }

    /// An item that started pipelined must wait after all (an item before it, in its batch,
    /// closed the key): it leaves the running ones and waits behind them, after those waiting.
    /// - Returns: the item when nothing of its key runs any more (it starts now, alone).
    mutating func requeue(_ item: Item, key: Key) -> Item? {
        guard let index = waiting.index(forKey: key) else { return item }
        waiting.values[index].isOpen = false
        waiting.values[index].running -= 1
        waiting.values[index].items.push(item)
        return waiting.values[index].running == 0 ? next(startingIn: index) : nil
    }

    /// Called when a running item of `key` finished: returns the next item of that key to run
    /// once none runs any more, or `nil` (the key is idle when nothing waits either).
    mutating func next(after key: Key) -> Item? {
        guard let index = waiting.index(forKey: key) else { return nil }
        waiting.values[index].running -= 1
        guard waiting.values[index].running <= 0 else { return nil }
        return next(startingIn: index)
    }

    /// The next waiting item of the entry at `index`, which runs nothing: it starts, alone (the
    /// key closed); with nothing waiting the entry goes.
    @inline(__always)
    private mutating func next(startingIn index: Dictionary<Key, Entry>.Index) -> Item? {
        // Popped in place through the dictionary's values: a copy taken out would share the
        // queue's storage with the dictionary and copy all of it on the first change.
        if let item = waiting.values[index].items.pop() {
            waiting.values[index].running = 1
            waiting.values[index].isOpen = false
            return item
        }
        waiting.remove(at: index)
        return nil
    }

    /// Forgets `key` altogether, its running items (given up) as its waiting ones.
    mutating func forget(_ key: Key) {
        waiting.removeValue(forKey: key)
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
