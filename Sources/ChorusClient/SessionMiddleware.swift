import Foundation
import HTTPTypes
import OpenAPIRuntime
import Synchronization

/// Every request of a ``ChorusClient`` passes here: it gets the bearer token, reads get `Chorus-Min-Position` (the
/// highest `Chorus-Position` any answer carried, so the client always reads its own writes), and a refusal becomes a
/// ``ChorusError``.
struct SessionMiddleware: ClientMiddleware {
    let tokens: any TokenStore
    let positions: PositionTracker

    static let position = HTTPField.Name("Chorus-Position")!
    static let minPosition = HTTPField.Name("Chorus-Min-Position")!

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if let token = await tokens.token() { request.headerFields[.authorization] = "Bearer \(token)" }
        // A live stream starts after a position of its own (Last-Event-ID) instead.
        if request.method == .get, operationID != "live", let highest = positions.highest {
            request.headerFields[Self.minPosition] = String(highest)
        }
        let (response, responseBody) = try await next(request, body, baseURL)
        if let text = response.headerFields[Self.position], let position = UInt64(text) { positions.saw(position) }
        guard (200..<300).contains(response.status.code) else {
            var bytes: Data?
            if let responseBody { bytes = try? await Data(collecting: responseBody, upTo: 64 * 1024) }
            throw ChorusError(status: response.status.code, body: bytes)
        }
        return (response, responseBody)
    }
}

/// The highest log position the client has seen in an answer: what it has written or read, and so must see again.
final class PositionTracker: Sendable {
    private let position = Mutex<UInt64?>(nil)

    var highest: UInt64? { position.withLock { $0 } }

    func saw(_ new: UInt64) {
        position.withLock { if $0.map({ new > $0 }) ?? true { $0 = new } }
    }
}
