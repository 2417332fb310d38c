import ChorusDomain
import ChorusLog
import ChorusStorage
import Crypto
import Foundation
import Synchronization

/// The data keys of one data directory (`keys/`), in a store of their own that is never part of the log: user id →
/// 32 random bytes, or an empty value once the key is destroyed (so that an erased user reads as erased, not as a
/// lost key). Keys are cached once read. ``compact()`` takes destroyed keys out of the file's freed pages.
public final class DataKeyStore: PersonalDataKeys {
    private let store: CompactableStore
    private let table: StoreTable
    /// Keys read or made so far; nil for destroyed ones.
    private let cache = Mutex<[CachedUser: SymmetricKey?]>([:])
    private let durable: Bool

    /// With `durable: false` (a bulk import), new keys are written without an fsync each: ``sync()`` before the log
    /// is synced.
    public init(directory: String, durable: Bool = true) throws {
        self.durable = durable
        store = try CompactableStore(directory: directory, tables: ["keys"])
        table = store.table("keys")
    }

    public func key(of user: UserID) throws -> SymmetricKey? {
        let cached = CachedUser(user)
        if let key = cache.withLock({ $0[cached] }) { return key }
        let stored = try store.read { try $0.value(for: Array(user.rawValue.utf8), in: table) }
        guard let stored else { throw DataKeyError.missing(user) }
        let key = stored.isEmpty ? nil : SymmetricKey(data: stored)
        cache.withLock { $0[cached] = .some(key) }
        return key
    }

    public func makeKey(for user: UserID) throws -> SymmetricKey {
        // A key made before; a destroyed one (nil) or none (an error) goes on to the store, which tells them apart.
        if let key = try? self.key(of: user) { return key }
        let made = SymmetricKey(size: .bits256)
        let kept = try store.write(durable: durable) { transaction -> [UInt8] in
            if let existing = try transaction.value(for: Array(user.rawValue.utf8), in: table) { return existing }
            let bytes = made.withUnsafeBytes { Array($0) }
            try transaction.put(bytes, for: Array(user.rawValue.utf8), in: table)
            return bytes
        }
        guard !kept.isEmpty else { throw DataKeyError.destroyed(user) }
        let key = SymmetricKey(data: kept)
        cache.withLock { $0[CachedUser(user)] = .some(key) }
        return key
    }

    public func destroy(_ user: UserID) throws {
        cache.withLock { $0[CachedUser(user)] = .some(nil) }
        try store.write { try $0.put([], for: Array(user.rawValue.utf8), in: table) }
    }

    /// Keeps `bytes` as the user's key (empty: destroyed) unless the store has one for them already: a key made
    /// elsewhere (another node of a cluster), cached here.
    public func adopt(_ bytes: [UInt8], for user: UserID) throws {
        try store.write(durable: durable) { transaction in
            guard try transaction.value(for: Array(user.rawValue.utf8), in: table) == nil else { return }
            try transaction.put(bytes, for: Array(user.rawValue.utf8), in: table)
        }
        cache.withLock { $0[CachedUser(user)] = nil }
    }

    /// Copies the store without its freed pages, which may still hold destroyed keys, and swaps the copy in.
    public func compact() throws { try store.compact() }

    /// Writes a compacted copy of the keys into the empty directory `destination` (a backup).
    public func copy(to destination: String) throws {
        try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: true)
        try store.copyCompacted(to: destination)
    }

    /// Every user's stored key (empty when destroyed), in user id order: what a cluster is seeded with.
    public func allKeys() throws -> [(user: String, key: [UInt8])] {
        try store.read { transaction in
            var keys: [(String, [UInt8])] = []
            try transaction.scan(table) { key, value in
                keys.append((String(decoding: key, as: UTF8.self), Array(value)))
                return true
            }
            return keys
        }
    }

    /// How many users have a key stored (destroyed ones included).
    public func count() throws -> Int { try store.read { try $0.count(table) } }

    /// Reads every stored key into the cache in one pass, for a command that opens nearly every user's fields (an
    /// import, a rebuild): no read of the store at each user's first event, and the keys, which the cache would hold
    /// by its end anyway, allocated together rather than scattered among the command's short-lived allocations (which
    /// had kept the allocator splitting and merging fragments: a sixth of a million-event import's time).
    public func preload() throws {
        let stored = try store.read { transaction in
            var keys: [(CachedUser, SymmetricKey?)] = []
            try transaction.scan(table) { user, key in
                keys.append(
                    (
                        CachedUser(UserID(unchecked: String(decoding: user, as: UTF8.self))),
                        key.isEmpty ? nil : SymmetricKey(data: key)
                    ))
                return true
            }
            return keys
        }
        cache.withLock { cache in
            guard !cache.isEmpty else {
                // Made whole, each key hashed once: grown key by key, the table rehashed every key at each doubling,
                // and this runs before a command's work can start.
                cache = Dictionary(stored) { first, _ in first }
                return
            }
            for (user, key) in stored where cache[user] == nil { cache[user] = .some(key) }
        }
    }

    /// Forces every key written to disk.
    public func sync() throws { try store.sync() }

    public func close() { store.close() }
}

/// A user id as ``DataKeyStore``'s cache holds it: up to 32 bytes in the entry itself (every id Chorus makes has 26),
/// so that a lookup compares ids without reading a string's storage elsewhere in memory. That read missed the
/// processor's caches (a cache of every user does not fit them) and was a third of a lookup; longer ids as strings.
private enum CachedUser: Hashable {
    /// The id's bytes, zeros after them, and how many there are.
    case inline(UInt64, UInt64, UInt64, UInt64, count: Int)
    case text(String)

    init(_ user: UserID) {
        let utf8 = user.rawValue.utf8
        guard utf8.count <= 32 else {
            self = .text(user.rawValue)
            return
        }
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &words) { $0.copyBytes(from: utf8) }
        self = .inline(words.0, words.1, words.2, words.3, count: utf8.count)
    }
}
