import ChorusDomain
import ChorusLog
import ChorusStorage

/// The read models at one position: every answer read from one view reflects that position, and every user embedded
/// in it is that user's profile as of that position (read models keep user ids only, and join the profile here).
///
/// A view exists inside the read transaction of ``ProjectionEngine/snapshot(_:)`` and is lent to its closure. It is
/// noncopyable, so it cannot outlive that closure, and neither can what it reads in place (``StoredPost``). Each read
/// model's queries are an extension of this type, in that model's own file.
public struct ReadView: ~Copyable {
    let transaction: StoreTransaction
    let models: ReadModels
    /// The data keys that open the events' personal fields (for what is read from the log, as live changes are).
    let keys: any PersonalDataKeys
    /// The log position the whole view reflects.
    public let position: LogPosition
    /// Profiles already read in this view: a feed page names the same few authors again and again.
    let seenProfiles = ProfileMemo()
    /// Who is hidden from whom, read once per viewer (``Blocks``).
    let relationMemo = RelationMemo()
    /// The muted words in force of each viewer, read once (``MutedWords``).
    let mutedWordMemo = MutedWordMemo()

    init(transaction: StoreTransaction, models: ReadModels, keys: any PersonalDataKeys, position: LogPosition) {
        self.transaction = transaction
        self.models = models
        self.keys = keys
        self.position = position
    }
}

/// An answer and the log position it reflects, all of it (an HTTP answer's `Chorus-Position`).
public struct Snapshot<Answer: Sendable>: Sendable {
    public let answer: Answer
    public let position: LogPosition
}
