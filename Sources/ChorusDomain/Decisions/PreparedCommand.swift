import ChorusLog

/// A command after everything that can be checked without the decision state: validated, normalised, new ids made,
/// password hashed, media looked up. What is left, its ``Decision``, is decided inside the log writer's transaction.
struct PreparedCommand: Sendable {
    /// Whom idempotency keys are scoped to: the user id, or for a registration, login or reset request the key of
    /// the e-mail it claims (``Validate/emailKey(_:)``).
    let caller: String
    var decision: any Decision
    /// Identifies the request for idempotency keys: FNV-1a 64 of its normalised fields.
    let fingerprint: UInt64
    /// Who asks, as the log records it: the user id (a registration's new one); empty for a login or reset request
    /// until the user is known. Never an e-mail key: the log keeps its records after an erasure, and a hash of an
    /// e-mail still tells whether that e-mail had an account.
    var actor: String

    /// A command of `caller` (the actor too, unless said), identified by `tag` and what `fields` writes. Passwords
    /// are never among the fields: the fingerprint is stored, and a fast hash of a password must never be.
    init(
        caller: String, actor: String? = nil, tag: UInt8, fields: (inout PayloadWriter) -> Void = { _ in },
        decision: any Decision
    ) {
        var canonical = PayloadWriter()
        canonical.write(tag)
        fields(&canonical)
        self.caller = caller
        self.actor = actor ?? caller
        self.decision = decision
        self.fingerprint = canonical.bytes.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }
}

/// What preparing a command may use: the media store, the password hasher, and the time it is prepared at.
struct CommandPreparation {
    let media: any MediaCatalog
    let hasher: PasswordHasher
    let now: EventTime

    /// When a session started now ends.
    var sessionEnd: EventTime { now.adding(SessionStarted.lifetime) }
}

extension EventTime {
    func adding(_ duration: Duration) -> EventTime {
        EventTime(millisecondsSince1970: millisecondsSince1970 + duration.components.seconds * 1000)
    }
}
