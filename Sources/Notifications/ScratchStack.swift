/// A growable stack that hands out its top elements by moving them, for the parser's pending values.
///
/// `Array` cannot give up elements without copying them (a retain each) and then destroying the
/// originals (a release each); moving out of raw storage costs neither. The storage is owned by this
/// non-copyable value: elements `0..<count` are initialised, the rest is not, and `deinit` destroys
/// what is left (after a parse error) and frees the memory.
struct ScratchStack<Element>: ~Copyable {
    /// The storage; `0..<count` initialised.
    private var base: UnsafeMutablePointer<Element>
    /// The number of elements on the stack.
    private(set) var count = 0
    /// The number of elements the storage holds.
    private var capacity: Int

    /// Makes an empty stack with room for `capacity` elements.
    init(capacity: Int) {
        self.capacity = max(capacity, 1)
        base = .allocate(capacity: self.capacity)
    }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }

    /// Pushes an element.
    mutating func push(_ element: consuming Element) {
        if count == capacity { grow() }
        (base + count).initialize(to: element)
        count += 1
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
        base.deallocate()
        base = larger
        capacity *= 2
    }
}
