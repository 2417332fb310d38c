import ChorusLog
import ChorusProjections
import NIOCore
import Synchronization

/// Pages of posts as last rendered for a caller and a request, answered again for as long as nothing they were read
/// from has changed (``ChorusProjections/ReadFootprint``): then the page is byte for byte what reading it again would
/// answer, at the newest position. A page is a few dozen reads and most of a feed request's work; a caller who pulls
/// to refresh with nothing new in their feed gets the kept bytes.
///
/// Kept up to a budget of memory; past it, the oldest kept go first.
final class RenderedPages: Sendable {
    struct Key: Hashable, Sendable {
        let caller: String
        /// The request's path and query, as sent.
        let target: String
    }

    private struct Kept {
        var footprint: ReadFootprint
        let body: ByteBuffer
        /// What is sent to a client that takes gzip, made when the first such client asks.
        var forGzip: EncodedBody?
        /// Tells this entry from a later one under the same key, in `order`.
        let stamp: UInt64
        /// What it holds of memory, about: the body (gzipped too, once made), the key, the footprint, and the entry
        /// itself (an empty page costs more than its bytes).
        var cost: Int
    }

    private struct State {
        var kept: [Key: Kept] = [:]
        /// Keys in the order they were kept, from `oldest` on; earlier slots are spent.
        var order: [(key: Key, stamp: UInt64)] = []
        var oldest = 0
        var bytes = 0
        var nextStamp: UInt64 = 0

        mutating func remove(_ key: Key, stamp: UInt64) {
            guard let found = kept[key], found.stamp == stamp else { return }
            kept[key] = nil
            bytes -= found.cost
        }

        /// Forgets the oldest until `budget` holds, then drops the spent slots once they are most of `order`.
        mutating func trim(to budget: Int) {
            while bytes > budget, oldest < order.count {
                remove(order[oldest].key, stamp: order[oldest].stamp)
                oldest += 1
            }
            // Slots of pages forgotten or kept again since pile up while the bytes stay under budget.
            if order.count - oldest > 2 * kept.count + 1024 {
                order = order[oldest...].filter { kept[$0.key]?.stamp == $0.stamp }
                oldest = 0
            } else if oldest > 1024, oldest * 2 > order.count {
                order.removeFirst(oldest)
                oldest = 0
            }
        }
    }

    let budget: Int
    private let state = Mutex(State())

    /// Keeps up to `budget` bytes of pages.
    init(budget: Int) {
        self.budget = budget
    }

    /// The page kept for `key`, as sent to a client that takes gzip or not, and the position it is answered at, if
    /// nothing it was read from has changed on `readModels` since; a page that has changed is forgotten.
    func page(for key: Key, on readModels: ServedReadModels, gzip: Bool) -> (body: EncodedBody, position: LogPosition)?
    {
        guard let kept = state.withLock({ $0.kept[key] }) else { return nil }
        guard let position = readModels.unchangedPosition(of: kept.footprint) else {
            state.withLock { $0.remove(key, stamp: kept.stamp) }
            return nil
        }
        if position > kept.footprint.position {
            // Checked through `position` now, so the next check starts there (``ChorusStorage/ChangedKeys``).
            state.withLock { state in
                guard state.kept[key]?.stamp == kept.stamp else { return }
                state.kept[key]?.footprint = kept.footprint.holding(at: position)
            }
        }
        return (gzip ? gzipped(kept, key: key) : EncodedBody(kept.body, gzip: false), position)
    }

    /// `kept`'s body for a client that takes gzip: made once, then kept with it (the plain body, when gzip did not pay,
    /// so that it is not tried again).
    private func gzipped(_ kept: Kept, key: Key) -> EncodedBody {
        if let made = kept.forGzip { return made }
        let made = EncodedBody(kept.body, gzip: true)
        state.withLock { state in
            guard state.kept[key]?.stamp == kept.stamp, state.kept[key]?.forGzip == nil else { return }
            state.kept[key]?.forGzip = made
            guard made.isGzipped else { return }
            state.kept[key]?.cost += made.bytes.readableBytes
            state.bytes += made.bytes.readableBytes
            state.trim(to: budget)
        }
        return made
    }

    /// How many pages are kept, and the memory they take.
    var kept: (pages: Int, bytes: Int) { state.withLock { ($0.kept.count, $0.bytes) } }

    /// Whether a page is kept for `key`, changed or not.
    func isKept(_ key: Key) -> Bool { state.withLock { $0.kept[key] != nil } }

    /// Keeps `body`, read with `footprint`, for `key`; answers it as sent to a client that takes gzip or not.
    @discardableResult
    func keep(_ body: ByteBuffer, read footprint: ReadFootprint, for key: Key, gzip: Bool = false) -> EncodedBody {
        let cost = body.readableBytes + key.caller.utf8.count + key.target.utf8.count + footprint.size + 128
        guard cost <= budget / 16 else { return EncodedBody(body, gzip: gzip) }
        let kept = state.withLock { state in
            if let previous = state.kept[key] { state.remove(key, stamp: previous.stamp) }
            let stamp = state.nextStamp
            state.nextStamp += 1
            let kept = Kept(footprint: footprint, body: body, stamp: stamp, cost: cost)
            state.kept[key] = kept
            state.order.append((key, stamp))
            state.bytes += cost
            state.trim(to: budget)
            return kept
        }
        return gzip ? gzipped(kept, key: key) : EncodedBody(body, gzip: false)
    }
}
