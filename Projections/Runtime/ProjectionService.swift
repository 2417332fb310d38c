import Dispatch
import ServiceLifecycle

/// The served read models as a service (swift-service-lifecycle): its run follows the log and runs the online
/// rebuilds asked for, on the projection thread, until graceful shutdown, which abandons a rebuild before its swap.
public struct ProjectionService: Service {
    let readModels: ServedReadModels

    public init(readModels: ServedReadModels) { self.readModels = readModels }

    public func run() async throws {
        // Applying a batch is synchronous work of milliseconds: it gets a thread of its own rather than one of the few
        // that answer requests (with `chorus serve`, the event loops themselves). Its own: not shared with other read
        // models in the process (the tests' servers), whose long catch-up would hold these up.
        await withTaskExecutorPreference(ProjectionThread()) {
            await cancelWhenGracefulShutdown {
                await withDiscardingTaskGroup { group in
                    group.addTask { await readModels.follow() }
                    group.addTask { await readModels.runRebuilds() }
                }
            }
        }
    }
}

/// The thread one served read models are applied on.
final class ProjectionThread: TaskExecutor {
    private let queue = DispatchQueue(label: "chorus.projections")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
