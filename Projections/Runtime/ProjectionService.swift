import Dispatch
import ServiceLifecycle

/// The served read models as a service (swift-service-lifecycle): its run follows the log and runs the online
/// rebuilds asked for, on the projection thread, until graceful shutdown, which abandons a rebuild before its swap.
public struct ProjectionService: Service {
    let readModels: ServedReadModels

    public init(readModels: ServedReadModels) { self.readModels = readModels }

    public func run() async throws {
        // Batches are milliseconds of synchronous work: a thread of their own, not the few that answer requests, nor
        // another engine's in the process (the tests' servers), whose long catch-up would hold these up.
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
