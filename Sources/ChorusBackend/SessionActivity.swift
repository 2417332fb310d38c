import ChorusDomain
import ChorusLog
import ChorusStorage
import Foundation
import Synchronization

/// When each session last made a request, to the minute: what `GET /v1/me/sessions` shows as `lastSeenAt`. Kept in
/// memory (a request records it without writing anything) and saved to `session-activity` in the data directory when
/// the backend closes; a crash loses what was seen since the start, and a session not seen since shows its sign-in
/// time. Not in the log: a request that only reads must not append.
final class SessionActivity: Sendable {
    /// Seen again within this, a session is not recorded again.
    static let precision: Int64 = 60_000

    private let path: String
    private let seen: Mutex<[SessionID: Int64]>

    init(path: String) {
        self.path = path
        seen = Mutex(Self.load(path))
    }

    func record(_ session: SessionID, at now: EventTime = .now) {
        let milliseconds = now.millisecondsSince1970
        seen.withLock { seen in
            if let last = seen[session], milliseconds - last < Self.precision { return }
            seen[session] = milliseconds
        }
    }

    func lastSeen(_ session: SessionID) -> EventTime? {
        seen.withLock { $0[session] }.map(EventTime.init(millisecondsSince1970:))
    }

    /// Saves what was seen of the sessions still `live` (the rest are forgotten).
    func save(keeping live: (SessionID) -> Bool) throws {
        let entries = seen.withLock { $0 }.filter { live($0.key) }
        var bytes: [UInt8] = []
        for (session, milliseconds) in entries.sorted(by: { $0.key < $1.key }) {
            bytes += Array(session.rawValue.utf8) + [0]
            withUnsafeBytes(of: milliseconds.bigEndian) { bytes += $0 }
        }
        try AtomicFile.write(bytes, to: path, permissions: 0o600)
    }

    /// Session id, NUL, milliseconds (i64 big-endian), again; anything else in the file is ignored.
    private static func load(_ path: String) -> [SessionID: Int64] {
        guard let data = FileManager.default.contents(atPath: path) else { return [:] }
        let bytes = Array(data)
        var entries: [SessionID: Int64] = [:]
        var start = 0
        while let end = bytes[start...].firstIndex(of: 0), end + 9 <= bytes.count {
            let milliseconds = bytes[(end + 1)..<(end + 9)].reduce(Int64(0)) { $0 << 8 | Int64($1) }
            if let session = SessionID(String(decoding: bytes[start..<end], as: UTF8.self)) {
                entries[session] = milliseconds
            }
            start = end + 9
        }
        return entries
    }
}
