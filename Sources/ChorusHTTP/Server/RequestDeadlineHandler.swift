import HTTPTypes
import HummingbirdCore
import NIOCore
import NIOHTTPTypes

/// Closes a connection whose request has not fully arrived `timeout` after its head: a client that sends a body
/// slowly, or never finishes it, cannot hold a connection and its task for long. (Hummingbird's idle timeout resets
/// on every piece of a body, so a trickle would never trip it.) Nothing is appended for such a request: commands are
/// decided only once their whole body is in.
///
/// A request whose head and end arrive in one read, as GETs do, never starts a timer.
final class RequestDeadlineHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let timeout: TimeAmount
    /// A head has arrived and its end has not.
    private var reading = false
    private var deadline: Scheduled<Void>?

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            reading = true
        case .body:
            break
        case .end:
            reading = false
            deadline?.cancel()
            deadline = nil
        }
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if reading, deadline == nil {
            // The channel, which is Sendable, rather than the context; the task is cancelled when the handler goes.
            deadline = context.eventLoop.scheduleTask(in: timeout) { [channel = context.channel] in
                channel.close(promise: nil)
            }
        }
        context.fireChannelReadComplete()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
    }
}
