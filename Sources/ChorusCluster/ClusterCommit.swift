import ChorusLog

/// One commit of the cluster's log: its events' positions and the decision-state changes it made, in the order made.
struct ClusterCommit: Sendable {
    let number: UInt64
    let firstPosition: UInt64
    let lastPosition: UInt64
    /// ``StateChange/encode(_:)``'s bytes.
    let changes: [UInt8]

    var eventCount: Int { lastPosition >= firstPosition ? Int(lastPosition - firstPosition + 1) : 0 }
}

/// A change to one key of a decision-state table: a put (`value`), or a delete (nil).
struct StateChange: Sendable, Equatable {
    let table: String
    let key: [UInt8]
    let value: [UInt8]?

    /// Length-prefixed, big-endian: per change, the table name (u16 length), the key (u32), a kind byte (1 put,
    /// 0 delete) and for a put the value (u32).
    static func encode(_ changes: [StateChange]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(
            changes.reduce(0) { $0 + 11 + $1.table.utf8.count + $1.key.count + ($1.value?.count ?? 0) })
        for change in changes {
            append(UInt64(change.table.utf8.count), width: 2, to: &bytes)
            bytes += change.table.utf8
            append(UInt64(change.key.count), width: 4, to: &bytes)
            bytes += change.key
            if let value = change.value {
                bytes.append(1)
                append(UInt64(value.count), width: 4, to: &bytes)
                bytes += value
            } else {
                bytes.append(0)
            }
        }
        return bytes
    }

    /// - Throws: ``ClusterError`` for bytes ``encode(_:)`` did not write.
    static func decode(_ bytes: [UInt8]) throws -> [StateChange] {
        var changes: [StateChange] = []
        var offset = 0
        func take(_ count: Int) throws -> ArraySlice<UInt8> {
            guard count <= bytes.count - offset else { throw ClusterError("a commit's state changes are cut short") }
            defer { offset += count }
            return bytes[offset..<offset + count]
        }
        func number(width: Int) throws -> Int { try take(width).reduce(0) { $0 << 8 | Int($1) } }
        while offset < bytes.count {
            let table = String(decoding: try take(try number(width: 2)), as: UTF8.self)
            let key = Array(try take(try number(width: 4)))
            let kind = try take(1).first
            let value = kind == 1 ? Array(try take(try number(width: 4))) : nil
            changes.append(StateChange(table: table, key: key, value: value))
        }
        return changes
    }

    private static func append(_ value: UInt64, width: Int, to bytes: inout [UInt8]) {
        for shift in stride(from: (width - 1) * 8, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }
}
