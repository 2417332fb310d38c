import Hummingbird
import HummingbirdCore
import Logging
import NIOCore

/// HTTP/1.1 connections whose Swift tasks run on the event loop that does the connection's I/O.
///
/// Hummingbird hands each connection to a task on Swift's global executor, so every request crossed threads twice:
/// from the event loop that read it to a pool thread that answered it, and back to write the answer. Handlers here do
/// no blocking work longer than an LMDB lookup (appends wait for the log writer's thread, bcrypt for its own threads),
/// so they can run where the bytes arrive (`chorus bench api` measures the result).
struct EventLoopBoundHTTP1: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let http1: HTTP1Channel

    /// - Parameters:
    ///   - idleTimeout: a connection with no request under way for this long is closed (so is one whose request head
    ///     has not arrived whole by then).
    ///   - requestTimeout: a request whose body has not arrived whole this long after its head closes its connection.
    static func builder(idleTimeout: Duration, requestTimeout: Duration) -> HTTPServerBuilder {
        let configuration = HTTP1Channel.Configuration(
            additionalChannelHandlers: [
                MalformedRequestHandler(), RequestDeadlineHandler(timeout: TimeAmount(requestTimeout)),
            ],
            idleTimeout: TimeAmount(idleTimeout))
        return HTTPServerBuilder { responder in
            EventLoopBoundHTTP1(http1: HTTP1Channel(responder: responder, configuration: configuration))
        }
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        http1.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await withTaskExecutorPreference(EventLoopTaskExecutor(eventLoop: value.channel.eventLoop)) {
            await http1.handle(value: value, logger: logger)
        }
    }
}

/// Runs Swift tasks on one NIO event loop. Tasks (and the default actors they call) started with this preference, and
/// their child tasks, resume on the loop's thread.
final class EventLoopTaskExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
