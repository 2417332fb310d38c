import Foundation
import OpenAPIRuntime

/// What the server refused, as its error body says: the HTTP status, a `snake_case` code to switch on
/// (`email_taken`, `blocked`, `not_found`, …) and a sentence for a person.
public struct ChorusError: Error, Sendable, Hashable, CustomStringConvertible {
    public let status: Int
    public let code: String
    public let message: String

    public init(status: Int, code: String, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    /// The error an answer's body describes (`{"error": {"code", "message"}}`), or one made of its status alone.
    init(status: Int, body: Data?) {
        struct Body: Decodable {
            struct Detail: Decodable {
                let code: String
                let message: String
            }
            let error: Detail
        }
        if let body, let decoded = try? JSONDecoder().decode(Body.self, from: body) {
            self.init(status: status, code: decoded.error.code, message: decoded.error.message)
        } else {
            self.init(status: status, code: "http_\(status)", message: "the server answered \(status)")
        }
    }

    public var description: String { "\(status) \(code): \(message)" }
}

/// Runs a call of the generated client, throwing the server's refusal as a ``ChorusError`` rather than wrapped in the
/// runtime's `ClientError`.
func unwrapping<T>(_ call: () async throws -> T) async throws -> T {
    do {
        return try await call()
    } catch let error as ClientError {
        if let refusal = error.underlyingError as? ChorusError { throw refusal }
        throw error
    }
}
