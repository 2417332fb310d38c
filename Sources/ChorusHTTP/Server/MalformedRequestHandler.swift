import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// Answers a request that is not valid HTTP/1.1 (a malformed head, a header past the limits, a method HTTP does not
/// allow, a broken chunked body) with the contract's JSON error, `400 bad_request`, then closes the connection.
/// Hummingbird answers such a request with a bare 400 and no body, and a request head that HTTP types refuse with no
/// answer at all; a client then has nothing to tell its user, and the contract promises JSON for every error.
///
/// An error within a request whose head was read, while its body is being read, belongs to that request: it goes on to
/// the route reading the body, whose error becomes the answer as every route's does. An error found while an answer is
/// still being written waits for it to end.
final class MalformedRequestHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// A request's head has arrived and its end has not.
    private var readingRequest = false
    /// Requests that arrived whole, and answers that ended: a request waits for its answer while there are more of
    /// the first (an answer may also end before its request has, as a refusal of a body too large does).
    private var requestsRead = 0
    private var answersEnded = 0
    /// A malformed request waits for the answer before it to end.
    private var pendingAnswer: APIError?
    /// The connection is answered and closing: nothing more is read from it.
    private var closing = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        switch unwrapInboundIn(data) {
        case .head: readingRequest = true
        case .body: break
        case .end:
            readingRequest = false
            requestsRead += 1
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data) else {
            context.write(data, promise: promise)
            return
        }
        context.write(data, promise: promise)
        answersEnded += 1
        if let pending = pendingAnswer {
            pendingAnswer = nil
            answer(pending, context: context)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is HTTPParserError || error is HTTP1TypeConversionError, !readingRequest, !closing else {
            context.fireErrorCaught(error)
            return
        }
        let refusal = APIError.badRequest("the request is not valid HTTP/1.1: \(Self.describe(error))")
        if requestsRead > answersEnded {
            pendingAnswer = refusal
        } else {
            answer(refusal, context: context)
        }
    }

    private func answer(_ error: APIError, context: ChannelHandlerContext) {
        closing = true
        let body = error.body
        var fields = HTTPFields()
        fields[.contentType] = "application/json; charset=utf-8"
        fields[.contentLength] = String(body.count)
        fields[.connection] = "close"
        fields[.contentTypeOptions] = "nosniff"
        context.write(wrapOutboundOut(.head(HTTPResponse(status: error.status, headerFields: fields))), promise: nil)
        context.write(wrapOutboundOut(.body(ByteBuffer(bytes: body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { [channel = context.channel] _ in
            channel.close(promise: nil)
        }
    }

    /// What was wrong, in words a client developer can act on.
    private static func describe(_ error: any Error) -> String {
        switch error as? HTTPParserError {
        case .headerOverflow?: "its headers are larger than the server takes"
        case .invalidMethod?: "its method is not valid"
        case .invalidURL?: "its target is not a valid URL path"
        case .invalidVersion?: "its HTTP version is not one the server speaks"
        case .invalidChunkSize?, .invalidEOFState?: "its chunked body is malformed"
        case .invalidContentLength?, .unexpectedContentLength?: "its Content-Length is not valid"
        case .some: "its head is malformed"
        case nil: "its method or target is not valid"
        }
    }
}

extension HTTPField.Name {
    static let contentTypeOptions = Self("X-Content-Type-Options")!
}
