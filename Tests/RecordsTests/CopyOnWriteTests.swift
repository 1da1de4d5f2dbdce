import Testing

@testable import Records

/// `CopyOnWrite`: fields behind one reference, copied on a write while shared (which storage a
/// value holds is read through `@testable`: it is the point of the type, and nothing public shows it).
@Suite("CopyOnWrite")
struct CopyOnWriteTests {
    /// Fields as a record's are: text, an array and a number.
    struct Fields: Sendable, Equatable {
        var topic: String
        var headers: [String]
        var offset: Int64
    }

    static let fields = Fields(topic: "notifications.requests", headers: ["apns-topic"], offset: 41)

    /// The storage object `value`'s fields are in (read without writing, which would copy it).
    static func storage(_ value: CopyOnWrite<Fields>) -> ObjectIdentifier {
        ObjectIdentifier(value.storage)
    }

    @Test("reads the fields it was made with")
    func reads() {
        let value = CopyOnWrite(Self.fields)
        #expect(value.fields == Self.fields)
        #expect(value.fields.headers == ["apns-topic"])
    }

    @Test("a copy does not see the changes of the value it was copied from, nor that value the copy's")
    func valueSemantics() {
        var original = CopyOnWrite(Self.fields)
        var copy = original
        copy.fields.offset = 42
        copy.fields.headers.append("apns-id")
        #expect(original.fields == Self.fields)
        #expect(copy.fields == Fields(topic: "notifications.requests", headers: ["apns-topic", "apns-id"], offset: 42))
        original.fields.topic = "notifications.responses"
        #expect(copy.fields.topic == "notifications.requests")
        #expect(original.fields.offset == 41)
    }

    @Test("a value that is the only owner of its fields is written in place; a shared one is copied first")
    func copiesOnlyWhenShared() {
        var only = CopyOnWrite(Self.fields)
        let before = Self.storage(only)
        only.fields.offset += 1
        #expect(Self.storage(only) == before, "written in place")
        var shared = only
        #expect(Self.storage(shared) == before, "a copy shares the fields until one of them is written")
        shared.fields.offset += 1
        #expect(Self.storage(shared) != before, "copied before the write")
        #expect(Self.storage(only) == before, "the other owner keeps the fields it had")
        #expect(only.fields.offset == 42 && shared.fields.offset == 43)
    }
}
