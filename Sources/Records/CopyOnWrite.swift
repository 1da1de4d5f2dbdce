/// A value's fields behind one reference, copied when written while shared: how the values a
/// record turns into on its way through the worker (the consumed message, the request, the
/// delivery) are copied for one retain instead of one per string and array in them.
///
/// Read ``fields`` to read (a borrow: nothing is copied); write through it to change them (the
/// fields are copied first unless this value is their only owner). Values that share a storage
/// never see each other's changes.
///
/// `@inlinable` and `public`: the types that use it live in other modules, and its accessors must
/// compile down to a field access there, not to a call per read. Public, not `package`: Swift 6.3
/// does not specialise `@inlinable package` code in other modules of the package (it calls the
/// generic code, which looks up `Storage<Fields>`'s metadata in a hash table on every write:
/// 1-2 % of the gate-only path's CPU), while `public` generic code is specialised and inlined.
public struct CopyOnWrite<Fields: Sendable>: Sendable {
    /// The fields. `@unchecked Sendable`: they change only through ``CopyOnWrite/fields``'s
    /// `_modify`, which copies the storage first unless its value is the only owner, so a
    /// storage that other values (possibly on other threads) can see is never changed.
    ///
    /// `@exclusivity(unchecked)`: every access to ``fields`` goes through the enclosing value's
    /// accessors, whose own exclusivity the compiler checks statically, and a shared storage is
    /// only read; the dynamic check (`swift_beginAccess` on every read and write) was about 3 %
    /// of the gate-only path's CPU.
    @usableFromInline
    final class Storage: @unchecked Sendable {
        @usableFromInline @exclusivity(unchecked) var fields: Fields

        @inlinable
        init(_ fields: Fields) {
            self.fields = fields
        }
    }

    @usableFromInline var storage: Storage

    /// Keeps `fields` behind a reference of their own.
    @inlinable
    public init(_ fields: Fields) {
        storage = Storage(fields)
    }

    /// The fields: read in place, written after a copy when shared.
    @inlinable
    public var fields: Fields {
        _read { yield storage.fields }
        _modify {
            if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.fields) }
            yield &storage.fields
        }
    }
}
