/// A failure of the event log, with a code to branch on and a sentence for a person.
public struct EventLogError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// The stream's version was not what the append expected; nothing was appended.
        case wrongExpectedVersion
        /// The append itself is malformed (empty, oversized, bad stream id); nothing was appended.
        case invalidAppend
        /// A stored record fails its checksum or cannot be decoded.
        case corruptRecord
        /// LMDB or the disk failed; the batch it happened in appended nothing.
        case storage
        /// The log was closed.
        case closed
        /// Another process is writing this log; only one may.
        case locked
        /// The log was opened read-only.
        case readOnly
    }

    public let code: Code
    public let message: String
    public var stream: StreamID?
    public var expectedVersion: ExpectedVersion?
    /// For ``Code/wrongExpectedVersion``: the stream's version when the append was decided.
    public var actualVersion: UInt64?
    /// For ``Code/corruptRecord``: where.
    public var position: LogPosition?
    public var underlying: (any Error & Sendable)?

    public var description: String { "\(code.rawValue): \(message)" }

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public static func wrongExpectedVersion(stream: StreamID, expected: ExpectedVersion, actual: UInt64)
        -> EventLogError
    {
        var error = EventLogError(
            .wrongExpectedVersion, "stream \(stream) expected \(expected) but is at version \(actual)")
        error.stream = stream
        error.expectedVersion = expected
        error.actualVersion = actual
        return error
    }

    package static func invalidAppend(_ message: String) -> EventLogError {
        EventLogError(.invalidAppend, message)
    }

    package static func corruptRecord(at position: LogPosition?, _ reason: String) -> EventLogError {
        var error = EventLogError(
            .corruptRecord, "record \(position.map { "at position \($0)" } ?? "(position unknown)") \(reason)")
        error.position = position
        return error
    }

    package static let closed = EventLogError(.closed, "the event log is closed")

    package static func locked(_ directory: String) -> EventLogError {
        EventLogError(.locked, "another process is writing the log in \(directory); stop it, or open the log read-only")
    }

    package static let readOnly = EventLogError(.readOnly, "the event log was opened read-only")
}
