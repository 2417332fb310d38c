import ChorusBackend
import ChorusLog
import ChorusProjections
import Logging

extension DeliveryOutbox {
    /// Takes the items of each event into the outbox, once the read models have applied it, until cancelled: `items`
    /// makes an event's from the read models as they are then (at its position or later, as a live stream renders
    /// it). A failure is logged as `what`'s and tried again, waiting longer each time.
    package func follow(
        _ backend: ChorusBackend, logger: Logger, what: String,
        items: @escaping (RecordedEvent, borrowing ReadView) throws -> [Item]
    ) async {
        var retry = Duration.milliseconds(100)
        while !Task.isCancelled {
            do {
                let checkpoint = try self.checkpoint
                let applied = backend.readModels.current.position
                guard applied > checkpoint else {
                    _ = try await backend.readModels.waitForPosition(after: checkpoint, until: .now + .seconds(1))
                    continue
                }
                let recorded = try backend.log.read(
                    from: checkpoint.next, limit: min(512, Int(applied.rawValue - checkpoint.rawValue)))
                guard let last = recorded.last else { continue }
                let made = try backend.readModels.snapshot { view in
                    try recorded.flatMap { event in
                        try items(event, view).enumerated().map {
                            (position: event.position, index: $0.offset, item: $0.element)
                        }
                    }
                }.answer
                try add(made, through: last.position)
                retry = .milliseconds(100)
            } catch is CancellationError {
                return
            } catch {
                logger.error(
                    "\(what): taking events into the outbox failed; trying again", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: retry)
                retry = min(retry * 2, .seconds(30))
            }
        }
    }
}
