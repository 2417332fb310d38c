import ChorusDomain
import ChorusLog
import ChorusStorage
import Foundation
import Logging
import ServiceLifecycle

/// Completes account erasures. An ``AccountDeleted`` destroys the account's data key at once, so the log's sealed
/// copies of its personal data can no longer be read; what held that data in plain is rid of it here, within the
/// server's erasure delay of the deletion:
///
/// 1. the read models have applied the deletion (which took the account's posts, comments, profile, search entry and
///    message texts out of them), and the key is destroyed (again: a crash may have come between);
/// 2. the account's media and stored idempotent responses are removed;
/// 3. the stores that held plain copies are compacted with LMDB's compacting copy and swapped in, so that no freed
///    page keeps them: the read models (online, as a rebuild is swapped in), the stored responses, and the key store
///    (whose freed pages may keep the destroyed key). A store another process has open (a `chorus replay` beside the
///    server) is not swapped under it: the erasure waits until that process closes it;
/// 4. what the server keeps beside the backend (the webhook outbox, a ``PersonalDataHolder``) forgets the accounts;
/// 5. an ``ErasureCompleted`` is appended, which `GET /v1/admin/erasures` shows.
///
/// Erasures wait until the oldest pending one is half the delay old, so that deletions close together share one
/// compaction. A failure is logged and tried again, until the server stops; a restart picks up what is pending.
struct ErasureService: Service {
    let backend: ChorusBackend
    let holders: [any PersonalDataHolder]
    let logger: Logger

    func run() async {
        guard !backend.embeddedLogIsReadOnly else { return await waitForShutdown() }
        let delay = backend.erasureDelay
        // Often enough to meet the delay, rarely enough to cost nothing while idle.
        let interval = min(max(delay / 8, .milliseconds(50)), .seconds(30))
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await completeDueErasures(delay: delay)
                } catch is CancellationError {
                    return
                } catch let error as StoreInUseError {
                    logger.warning("an account erasure waits for a store to be closed", metadata: ["error": "\(error)"])
                } catch {
                    logger.error("an account erasure failed; trying again", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: interval)
            }
        }
    }

    private func waitForShutdown() async { try? await gracefulShutdown() }

    /// Completes every pending erasure once the oldest is half the delay old.
    func completeDueErasures(delay: Duration) async throws {
        let pending = try backend.commands.erasures().filter { $0.completedAt == nil }
        guard let oldest = pending.map(\.requestedAt).min() else { return }
        guard let requested = try backend.log.event(at: oldest)?.recordedAt else { return }
        let age = Duration.milliseconds(EventTime.now.millisecondsSince1970 - requested.millisecondsSince1970)
        guard age >= delay / 2 else { return }
        let started = ContinuousClock.now
        let last = pending.map(\.requestedAt).max() ?? oldest
        // However short the delay, what the deletion appended is worth waiting for.
        let patience = max(delay, .seconds(60))
        try await backend.readModels.waitUntilApplied(last, timeout: patience)
        for erasure in pending {
            try backend.commands.destroyKey(of: erasure.user)
            try backend.media.removeAll(of: erasure.user)
            try backend.responses.forget(caller: erasure.user.rawValue)
        }
        try backend.keyStore.compact()
        _ = try await backend.readModels.compactAndSwap()
        for holder in holders {
            try await holder.forget(pending.map(\.user), deletedThrough: last, timeout: patience)
        }
        for erasure in pending {
            _ = try await backend.commands.execute(.completeErasure(user: erasure.user))
        }
        logger.notice(
            "account erasures completed",
            metadata: ["accounts": "\(pending.count)", "took": "\(ContinuousClock.now - started)"])
    }
}

/// What keeps personal data in plain beside the backend (the server's webhook outbox): an erasure has it forget the
/// deleted accounts' before the erasure completes.
public protocol PersonalDataHolder: Sendable {
    /// Forgets what it keeps of `users`, whose ``AccountDeleted`` events are at or before `position`, so that no file
    /// keeps it, freed pages included. Waits, at most `timeout`, until it has taken in the log through `position`: what
    /// it takes in after that is rendered from read models that have the accounts deleted.
    func forget(_ users: [UserID], deletedThrough position: LogPosition, timeout: Duration) async throws
}
