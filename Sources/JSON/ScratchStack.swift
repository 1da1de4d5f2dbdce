/// A growable stack that hands out its top elements by moving them, for the parser's pending values.
///
/// `Array` cannot give up elements without copying them (a retain each) and then destroying the
/// originals (a release each); moving out of raw storage costs neither. Elements `0..<count` are
/// initialised, the rest is not, and `deinit` destroys what is left (after a parse error). The first
/// storage is lent by the caller (stack memory from `withUnsafeTemporaryAllocation`, so most parses
/// allocate nothing here) and must outlive the stack; storage grown beyond it is owned and freed here.
struct ScratchStack<Element>: ~Copyable {
    /// The storage; `0..<count` initialised.
    private var base: UnsafeMutablePointer<Element>
    /// The number of elements on the stack.
    private(set) var count = 0
    /// The number of elements the storage holds.
    private var capacity: Int
    /// Whether `base` was allocated here (after growing) rather than lent.
    private var ownsStorage = false

    /// Makes an empty stack in lent, uninitialised storage of at least one element.
    init(lending storage: UnsafeMutableBufferPointer<Element>) {
        if let start = storage.baseAddress, storage.count > 0 {
            base = start
            capacity = storage.count
        } else {
            base = .allocate(capacity: 16)
            capacity = 16
            ownsStorage = true
        }
    }

    deinit {
        base.deinitialize(count: count)
        if ownsStorage { base.deallocate() }
    }

    /// Pushes an element.
    mutating func push(_ element: consuming Element) {
        if count == capacity { grow() }
        (base + count).initialize(to: element)
        count += 1
    }

    /// The top element; the stack must not be empty.
    var top: Element { base[count - 1] }

    /// Removes the top element.
    mutating func pop() {
        count -= 1
        (base + count).deinitialize(count: 1)
    }

    /// The element at `position` (below `count`), borrowed for `body`.
    func withElement<Result>(at position: Int, _ body: (borrowing Element) -> Result) -> Result {
        body(base[position])
    }

    /// Moves the element at `position` out; the caller must then drop it from the stack with `forget(from:)`.
    mutating func move(at position: Int) -> Element {
        (base + position).move()
    }

    /// Drops the elements from `start` up without destroying them: they were moved out already.
    mutating func forget(from start: Int) {
        count = start
    }

    /// Destroys the elements from `start` up.
    mutating func remove(from start: Int) {
        (base + start).deinitialize(count: count - start)
        count = start
    }

    /// Moves the elements from `start` up into an array, leaving the stack `start` high.
    mutating func popArray(from start: Int) -> [Element] {
        let moving = count - start
        let storage = base + start
        let array = [Element](unsafeUninitializedCapacity: moving) { buffer, initialized in
            if moving > 0, let destination = buffer.baseAddress {
                destination.moveInitialize(from: storage, count: moving)
            }
            initialized = moving
        }
        count = start
        return array
    }

    /// Doubles the storage, moving the elements.
    private mutating func grow() {
        let larger = UnsafeMutablePointer<Element>.allocate(capacity: capacity * 2)
        larger.moveInitialize(from: base, count: count)
        if ownsStorage { base.deallocate() }
        base = larger
        capacity *= 2
        ownsStorage = true
    }
}
