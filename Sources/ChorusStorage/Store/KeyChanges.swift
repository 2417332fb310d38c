import Synchronization

/// Which parts of a store's tables a transaction touched, as buckets of ``ChangedKeys``: what a write changed, or what
/// a read's answer depends on. A ``StoreTransaction`` records into one while
/// ``StoreTransaction/recordingTouches(into:_:)`` runs.
///
/// Tables are tracked by partition: a key's partition is its first part, the bytes up to its first NUL (the owner
/// of a read model's key: a user, a post), or its first 8 bytes when it begins with a position. A read of a key, or
/// a scan confined to a prefix that names a whole partition, depends on that partition; any other scan, or a count,
/// on the whole table. A write touches its key's partition and its table.
package final class TouchedKeys {
    /// What is recorded: a read answer's dependencies, or a write's changes (not what the write read on the way).
    package enum Kind { case reads, writes }

    package let kind: Kind
    package private(set) var buckets: [UInt32] = []
    /// Set by a write that may have changed any key (a table emptied): whatever was read before is stale.
    package private(set) var everything = false

    package init(_ kind: Kind) { self.kind = kind }

    package func removeAll() {
        buckets.removeAll(keepingCapacity: true)
        everything = false
    }

    func read(_ key: UnsafeRawBufferPointer, in table: StoreTable) {
        guard kind == .reads else { return }
        buckets.append(KeyPartition.bucket(of: key, in: table))
    }

    func scanned(prefix: UnsafeRawBufferPointer, in table: StoreTable) {
        guard kind == .reads else { return }
        buckets.append(KeyPartition.bucket(ofPrefix: prefix, in: table) ?? KeyPartition.bucket(of: table))
    }

    func readWhole(_ table: StoreTable) {
        guard kind == .reads else { return }
        buckets.append(KeyPartition.bucket(of: table))
    }

    func wrote(_ key: UnsafeRawBufferPointer, in table: StoreTable) {
        guard kind == .writes else { return }
        buckets.append(KeyPartition.bucket(of: key, in: table))
        buckets.append(KeyPartition.bucket(of: table))
    }

    func changedEverything() { everything = true }
}

/// For each bucket of keys, the newest position at which a write changed one of them: whether an answer read at one
/// position still holds at a later one, without reading it again. Collisions between buckets only ever make an
/// answer look changed when it is not.
package final class ChangedKeys: Sendable {
    /// 8 MB of positions: a page depends on a few dozen buckets, and a batch changes a few thousand at most.
    package static let bucketCount = 1 << 20

    private struct State {
        var changedAt: [UInt64]
        /// Everything read before this position is stale (a build, a table emptied).
        var floor: UInt64 = 0
        /// The newest position recorded, in any bucket or as the floor: nothing read at it or later has changed.
        var newest: UInt64 = 0
    }

    private let state: Mutex<State>

    package init() {
        state = Mutex(State(changedAt: [UInt64](repeating: 0, count: Self.bucketCount)))
    }

    /// Records that the keys `written` touched changed at `position`. Must happen before `position` is announced
    /// as applied, so that whoever learns of the position also sees the change.
    package func record(_ written: TouchedKeys, at position: UInt64) {
        state.withLock { state in
            state.newest = max(state.newest, position)
            if written.everything {
                state.floor = max(state.floor, position)
                return
            }
            for bucket in written.buckets {
                state.changedAt[Int(bucket)] = max(state.changedAt[Int(bucket)], position)
            }
        }
    }

    /// Records that anything may have changed at `position` (a build wrote the tables from nothing).
    package func recordEverything(at position: UInt64) {
        state.withLock { state in
            state.floor = max(state.floor, position)
            state.newest = max(state.newest, position)
        }
    }

    /// Whether none of the buckets `read` depends on changed after `position` (the position it was read at), as far
    /// as the changes recorded so far go.
    package func unchanged(_ read: [UInt32], since position: UInt64) -> Bool {
        state.withLock { state in
            // Checked first: the buckets lie scattered over 8 MB, so each costs a cache miss.
            if state.newest <= position { return true }
            guard state.floor <= position else { return false }
            return read.allSatisfy { state.changedAt[Int($0)] <= position }
        }
    }
}

/// The bucket of a key's partition or of a whole table (see ``TouchedKeys``).
enum KeyPartition {
    static func bucket(of key: UnsafeRawBufferPointer, in table: StoreTable) -> UInt32 {
        hash(partition(of: key), table: table)
    }

    /// The bucket of the partition every key beginning with `prefix` lies in; nil when such keys may lie in several.
    static func bucket(ofPrefix prefix: UnsafeRawBufferPointer, in table: StoreTable) -> UInt32? {
        guard let first = prefix.first else { return nil }
        let confined = first == 0 ? prefix.count >= 8 : prefix.contains(0)
        return confined ? bucket(of: prefix, in: table) : nil
    }

    /// The whole table's bucket: every write to the table touches it.
    static func bucket(of table: StoreTable) -> UInt32 {
        hash(UnsafeRawBufferPointer(start: nil, count: 0), table: table, whole: true)
    }

    private static func partition(of key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        guard let first = key.first else { return key }
        let end = first == 0 ? min(8, key.count) : (key.firstIndex(of: 0) ?? key.count)
        return UnsafeRawBufferPointer(rebasing: key[..<end])
    }

    /// FNV-1a over the table's handle and the partition's bytes.
    private static func hash(_ bytes: UnsafeRawBufferPointer, table: StoreTable, whole: Bool = false) -> UInt32 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        mix(UInt8(truncatingIfNeeded: table.database.handle))
        mix(UInt8(truncatingIfNeeded: table.database.handle >> 8))
        mix(whole ? 1 : 0)
        for byte in bytes { mix(byte) }
        // The high bits are the better mixed.
        return UInt32(truncatingIfNeeded: (hash ^ (hash >> 32)) & UInt64(ChangedKeys.bucketCount - 1))
    }
}
