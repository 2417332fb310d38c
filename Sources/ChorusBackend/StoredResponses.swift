import ChorusLog
import ChorusStorage
import Crypto
import Foundation

/// The first response to each request sent with an `Idempotency-Key`, so that a retry gets exactly that response
/// (status, body, `Chorus-Position`) even after the read models moved on. Kept per caller and key, with a digest of
/// the request so that the same key with another request can be refused. Registration and login are not kept here:
/// their answers hold a token (see ``SessionTokens``).
package final class StoredResponses: Sendable {
    package struct Stored: Sendable, Equatable {
        package var requestDigest: [UInt8]
        package var status: Int
        package var position: LogPosition
        package var body: [UInt8]

        package init(requestDigest: [UInt8], status: Int, position: LogPosition, body: [UInt8]) {
            self.requestDigest = requestDigest
            self.status = status
            self.position = position
            self.body = body
        }
    }

    private let store: CompactableStore
    private let table: StoreTable

    init(directory: String) throws {
        store = try CompactableStore(directory: directory, tables: ["responses"])
        table = store.table("responses")
    }

    /// A digest that tells two requests apart: method, path and body.
    package static func digest(method: String, path: String, body: [UInt8]) -> [UInt8] {
        var hasher = SHA256()
        for part in [Array(method.utf8), Array(path.utf8), body] {
            withUnsafeBytes(of: UInt64(part.count).bigEndian) { hasher.update(bufferPointer: $0) }
            hasher.update(data: part)
        }
        return Array(hasher.finalize())
    }

    package func response(caller: String, key: String) throws -> Stored? {
        try store.read { transaction in
            try transaction.withValue(for: Self.key(caller, key), in: table) { value in
                guard let value, value.count >= 32 + 2 + 8 else { return nil }
                let bytes = Array(value)
                let status = Int(UInt16(bytes[32]) << 8 | UInt16(bytes[33]))
                let position = bytes[34..<42].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                return Stored(
                    requestDigest: Array(bytes[0..<32]), status: status, position: LogPosition(position),
                    body: Array(bytes[42...]))
            }
        }
    }

    /// Keeps the first response; a later one for the same caller and key is dropped.
    package func keep(_ response: Stored, caller: String, key: String) throws {
        var value = response.requestDigest
        value += [UInt8(response.status >> 8), UInt8(response.status & 0xFF)]
        withUnsafeBytes(of: response.position.rawValue.bigEndian) { value += $0 }
        value += response.body
        try store.write { transaction in
            let key = Self.key(caller, key)
            guard try transaction.withValue(for: key, in: table, { $0 == nil }) else { return }
            try transaction.put(value, for: key, in: table)
        }
    }

    /// Forgets every response kept for `caller` (a deleted account's), and compacts the store so that no freed page
    /// keeps them; returns how many there were.
    @discardableResult
    func forget(caller: String) throws -> Int {
        let prefix = Array(caller.utf8) + [0]
        let removed = try store.write { transaction -> Int in
            var keys: [[UInt8]] = []
            try transaction.scan(table, prefix: prefix) { key, _ in
                keys.append(Array(key))
                return true
            }
            for key in keys { _ = try transaction.delete(key, in: table) }
            return keys.count
        }
        try store.compact()
        return removed
    }

    func close() { store.close() }

    private static func key(_ caller: String, _ key: String) -> [UInt8] { [UInt8](caller, nulThen: key) }
}
