import ChorusDomain

/// The live hub's streams by the subjects they listen to (``LiveSubject``): an event's subjects name the streams it
/// may concern, so a batch costs the hub what it concerns, not what it costs to ask every open stream about it.
///
/// It may name more streams than an event concerns (never fewer): each stream's ``LiveInterest/mayConcern(_:)`` has
/// the last word.
struct LiveStreamIndex {
    private var streams: [LiveSubject: Set<UInt64>] = [:]
    /// Every subject each stream was added under, to take it out again.
    private var subjects: [UInt64: [LiveSubject]] = [:]
    /// The feed streams that take posts and reposts by anyone (``LiveInterest/listensToEveryAuthor``).
    private var everyAuthor: Set<UInt64> = []

    /// Adds stream `id` under every subject its `interest` listens to.
    mutating func add(_ id: UInt64, _ interest: LiveInterest) {
        interest.forEachSubject { add(id, listeningTo: $0) }
        if interest.listensToEveryAuthor { everyAuthor.insert(id) }
    }

    /// Adds what stream `id` listens to after its interest learnt `learnt` (``LiveInterest/learn(from:)``).
    mutating func update(_ id: UInt64, learnt: LiveSubject?, _ interest: LiveInterest) {
        if interest.listensToEveryAuthor {
            everyAuthor.insert(id)
        } else if let learnt {
            add(id, listeningTo: learnt)
        }
    }

    mutating func remove(_ id: UInt64) {
        for subject in subjects.removeValue(forKey: id) ?? [] {
            streams[subject]?.remove(id)
            if streams[subject]?.isEmpty == true { streams[subject] = nil }
        }
        everyAuthor.remove(id)
    }

    /// The streams listening to `subject`, but not those that take posts by anyone.
    func streams(listeningTo subject: LiveSubject) -> Set<UInt64> { streams[subject] ?? [] }

    /// Calls `body` with every stream `event` may concern, once for each of its subjects the stream listens to.
    func forEachStream(concernedBy event: DomainEvent, _ body: (UInt64) -> Void) {
        LiveSubject.forEach(of: event) { subject in
            streams[subject]?.forEach(body)
            if case .postsBy = subject { everyAuthor.forEach(body) }
        }
    }

    private mutating func add(_ id: UInt64, listeningTo subject: LiveSubject) {
        if streams[subject, default: []].insert(id).inserted { subjects[id, default: []].append(subject) }
    }
}
