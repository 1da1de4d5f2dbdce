/// A JSON object that keeps its keys in the order written; each key appears once.
///
/// Keys match by their exact Unicode scalars (not Swift's canonical equivalence), as JSON does.
/// Lookups scan the members: objects in notification payloads are small, and a scan beats hashing there.
public struct JSONObject: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    /// One key and its value.
    public typealias Element = (key: String, value: JSONValue)

    /// The members in order.
    package var members: [Member]

    /// Makes an empty object.
    public init() { members = [] }

    /// Makes an object from pairs in order; a repeated key keeps its first position and its last value.
    public init(_ pairs: [(String, JSONValue)]) {
        members = []
        members.reserveCapacity(pairs.count)
        for (key, value) in pairs { self[key] = value }
    }

    /// Makes an object from a dictionary literal, keeping the order written.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements)
    }

    /// Wraps members the parser has already made unique.
    package init(uniqueMembers: [Member]) { members = uniqueMembers }

    /// The value for `key`; setting nil removes the key, setting an existing key keeps its position.
    public subscript(key: String) -> JSONValue? {
        get {
            guard let index = index(of: key) else { return nil }
            return members[index].value
        }
        set {
            if let index = index(of: key) {
                if let newValue { members[index].value = newValue } else { members.remove(at: index) }
            } else if let newValue {
                members.append(Member(key: key, value: newValue))
            }
        }
    }

    /// The keys in order.
    public var keys: [String] { members.map(\.key) }

    /// The number of members.
    public var count: Int { members.count }

    /// Whether the object has no members.
    public var isEmpty: Bool { members.isEmpty }

    /// Removes `key`, returning its value if it was there.
    @discardableResult
    public mutating func removeValue(forKey key: String) -> JSONValue? {
        guard let index = index(of: key) else { return nil }
        return members.remove(at: index).value
    }

    /// Iterates the members in order.
    public func makeIterator() -> some IteratorProtocol<Element> {
        members.lazy.map { (key: $0.key, value: $0.value) }.makeIterator()
    }

    /// The position of `key`, compared scalar by scalar.
    func index(of key: String) -> Int? {
        members.firstIndex { JSONObject.sameKey($0.key, key) }
    }

    /// Exact key equality: same UTF-8 bytes (Swift's `==` would also equate canonically equivalent strings).
    @inline(__always)
    static func sameKey(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.count == rhs.utf8.count && sameBytes(lhs, rhs)
    }

    /// Compares the UTF-8 bytes of two strings of the same length.
    private static func sameBytes(_ lhs: String, _ rhs: String) -> Bool {
        var lhs = lhs, rhs = rhs
        return lhs.withUTF8 { left in
            rhs.withUTF8 { right in left.elementsEqual(right) }
        }
    }

    /// JSON equality: the same keys with equal values, in any order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.members.count == rhs.members.count else { return false }
        for member in lhs.members {
            guard let other = rhs.index(of: member.key), rhs.members[other].value == member.value else { return false }
        }
        return true
    }

    /// Hashes the members independently of their order, consistent with `==`.
    public func hash(into hasher: inout Hasher) {
        var combined = 0
        for member in members {
            var memberHasher = Hasher()
            memberHasher.combine(JSONValue.ExactString(member.key))
            memberHasher.combine(member.value)
            combined ^= memberHasher.finalize()
        }
        hasher.combine(members.count)
        hasher.combine(combined)
    }
}

extension JSONObject {
    /// One member: a key and its value.
    package struct Member: Sendable {
        /// The key.
        package var key: String
        /// Its value.
        package var value: JSONValue

        /// Makes a member.
        package init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }
}

extension JSONObject: CustomStringConvertible {
    /// The compact JSON text.
    public var description: String { JSONValue.object(self).compactText }
}
