import ChorusDomain
import ChorusProjections
import Synchronization

/// The live streams each user holds open, at most ``limit`` at once: one token held a thousand, each a task and a share
/// of every batch the hub walks. When a user opens one more, their oldest is closed (as a streaming API that allows
/// one connection per account closes the older one): a client whose connections died without a word (a phone that
/// changed networks), which the server only notices minutes later, is never refused.
final class LiveStreamSlots: Sendable {
    /// The most streams one user holds; nil for no bound.
    let limit: Int?
    private let hub: LiveHub
    private let open = Mutex<(byUser: [UserID: [Stream]], nextID: UInt64)>(([:], 0))

    init(limit: Int?, hub: LiveHub) {
        self.limit = limit
        self.hub = hub
    }

    /// A slot for a new stream of `user`, held until the slot goes; their oldest stream is closed if they hold
    /// ``limit`` already.
    func take(for user: UserID) -> Slot {
        let (stream, evicted) = open.withLock { [hub] open -> (Stream, Stream?) in
            let stream = Stream(id: open.nextID, hub: hub)
            open.nextID += 1
            open.byUser[user, default: []].append(stream)
            guard let limit, open.byUser[user, default: []].count > limit else { return (stream, nil) }
            return (stream, open.byUser[user]?.removeFirst())
        }
        evicted?.close()
        return Slot(slots: self, user: user, stream: stream)
    }

    private func release(user: UserID, id: UInt64) {
        open.withLock { open in
            open.byUser[user]?.removeAll { $0.id == id }
            if open.byUser[user]?.isEmpty == true { open.byUser[user] = nil }
        }
    }

    /// What the slots know of one stream: whether it must end, and the hub subscription it waits on.
    final class Stream: Sendable {
        fileprivate let id: UInt64
        private let hub: LiveHub
        private let state = Mutex<(closed: Bool, subscriber: UInt64?)>((false, nil))

        fileprivate init(id: UInt64, hub: LiveHub) {
            (self.id, self.hub) = (id, hub)
        }

        /// Whether the stream was closed: it must end.
        var isClosed: Bool { state.withLock { $0.closed } }

        /// Records the hub subscription the stream waits on now (nil: none); false when it was closed, and must end
        /// instead.
        func waits(on subscriber: UInt64?) -> Bool {
            state.withLock { state in
                state.subscriber = subscriber
                return !state.closed
            }
        }

        /// Marks the stream closed, and ends its wait if it waits.
        fileprivate func close() {
            let subscriber = state.withLock { state in
                state.closed = true
                return state.subscriber
            }
            if let subscriber { hub.unsubscribe(subscriber) }
        }
    }

    /// One open stream's place, given back when the slot goes: with the stream's answer, whether its body ran to the
    /// end, failed, or never started.
    final class Slot: Sendable {
        let stream: Stream
        private let slots: LiveStreamSlots
        private let user: UserID

        fileprivate init(slots: LiveStreamSlots, user: UserID, stream: Stream) {
            (self.slots, self.user, self.stream) = (slots, user, stream)
        }

        deinit { slots.release(user: user, id: stream.id) }
    }
}
