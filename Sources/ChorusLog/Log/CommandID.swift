import Foundation

/// Identifies the command that caused an append. Appending again with the same id appends nothing and returns the
/// original positions, so a client may retry a command whose answer it never received.
public struct CommandID: Hashable, Sendable, CustomStringConvertible {
    public let uuid: UUID

    public init(_ uuid: UUID = UUID()) { self.uuid = uuid }

    public var description: String { uuid.uuidString.lowercased() }
}

/// Ties together the events caused, directly or indirectly, by one request.
public struct CorrelationID: Hashable, Sendable, CustomStringConvertible {
    public let uuid: UUID

    public init(_ uuid: UUID = UUID()) { self.uuid = uuid }

    public var description: String { uuid.uuidString.lowercased() }
}
