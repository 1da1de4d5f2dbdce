/// A value's fields behind one reference, copied when written while shared: how the values a
/// record turns into on its way through the worker (the consumed message, the request, the
/// delivery) are copied for one retain instead of one per string and array in them.
///
/// Read ``fields`` to read (a borrow: nothing is copied); write through it to change them (the
/// fields are copied first unless this value is their only owner). Values that share a storage
/// never see each other's changes.
///
/// `@inlinable`: the types that use it live in other modules, and its accessors must compile
/// down to a field access there, not to a call per read.
package struct CopyOnWrite<Fields: Sendable>: Sendable {
    /// The fields. `@unchecked Sendable`: they change only through ``CopyOnWrite/fields``'s
    /// `_modify`, which copies the storage first unless its value is the only owner, so a
    /// storage that other values (possibly on other threads) can see is never changed.
    @usableFromInline
    final class Storage: @unchecked Sendable {
        @usableFromInline var fields: Fields

        @inlinable
        init(_ fields: Fields) {
            self.fields = fields
        }
    }

    @usableFromInline var storage: Storage

    /// Keeps `fields` behind a reference of their own.
    @inlinable
    package init(_ fields: Fields) {
        storage = Storage(fields)
    }

    /// The fields: read in place, written after a copy when shared.
    @inlinable
    package var fields: Fields {
        _read { yield storage.fields }
        _modify {
            if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.fields) }
            yield &storage.fields
        }
    }
}
