import ChorusBackend
import ChorusDomain
import ChorusHTTP
import ChorusLog
import ChorusProjections
import ChorusTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging

/// A server on a fresh data directory, driven in process through Hummingbird's router test client (or over a real
/// socket with `.live`); the projection engine follows the log as it does in `chorus serve`.
struct APIFixture: Sendable {
    let client: any TestClientProtocol
    let backend: ChorusBackend

    /// How long the test servers wait for their read models to show a write: not the served default of 5 s, which
    /// fifteen servers' first writes waited past in CI, though every one was applied. A test of the timeout itself
    /// sets its own.
    static let consistencyTimeout = readModelsWait

    /// The admin token of the test servers, unless a test configures its own: `/metrics` and the positions of
    /// `/health` are for it alone.
    static let adminToken = "the-test-servers-admin-token"

    /// One response, its body parsed as JSON when it is JSON.
    struct Answer: @unchecked Sendable {
        let status: HTTPResponse.Status
        let headers: HTTPFields
        let bytes: [UInt8]
        let json: Any?

        var object: [String: Any] { json as? [String: Any] ?? [:] }
        var items: [[String: Any]] { object["items"] as? [[String: Any]] ?? [] }
        var errorCode: String? { (object["error"] as? [String: Any])?["code"] as? String }
        var position: UInt64? { headers[HTTPField.Name("Chorus-Position")!].flatMap(UInt64.init) }
    }

    /// A registered user: id and token.
    struct User: Sendable {
        let id: String
        let token: String
        let email: String
    }

    @discardableResult
    func call(
        _ method: HTTPRequest.Method, _ uri: String, token: String? = nil, json: Any? = nil, body: [UInt8]? = nil,
        headers extra: [String: String] = [:]
    ) async throws -> Answer {
        var headers = HTTPFields()
        if let token { headers[.authorization] = "Bearer \(token)" }
        var bytes = body
        if let json {
            bytes = Array(try JSONSerialization.data(withJSONObject: json))
            headers[.contentType] = "application/json"
        }
        for (name, value) in extra { headers[HTTPField.Name(name)!] = value }
        let response = try await client.executeRequest(
            uri: uri, method: method, headers: headers, body: bytes.map { ByteBuffer(bytes: $0) })
        let data = Array(response.body.readableBytesView)
        return Answer(
            status: response.status, headers: response.headers, bytes: data,
            json: data.isEmpty ? nil : try? JSONSerialization.jsonObject(with: Data(data), options: [.fragmentsAllowed])
        )
    }

    func register(_ name: String, email: String? = nil, major: String = "") async throws -> User {
        let email = email ?? "\(name.lowercased().filter(\.isLetter))-\(UUID().uuidString.prefix(8))@example.com"
        let answer = try await call(
            .post, "/v1/auth/register",
            json: ["email": email, "password": "secret-password", "name": name, "major": major])
        guard answer.status == .created, let token = answer.object["token"] as? String,
            let id = (answer.object["user"] as? [String: Any])?["id"] as? String
        else {
            throw FixtureError(
                "registration of \(name) failed: \(answer.status) \(String(decoding: answer.bytes, as: UTF8.self))")
        }
        return User(id: id, token: token, email: email)
    }

    /// Registers a user through the backend, not the test client: for servers that close idle connections within a
    /// second, which may close the client's own connection before its first request on a busy machine.
    func registerThroughBackend(_ name: String) async throws -> User {
        let email = "\(name.lowercased().filter(\.isLetter))-\(UUID().uuidString.prefix(8))@example.com"
        let result = try await backend.execute(
            .registerUser(email: email, password: "secret-password", name: name), idempotencyKey: nil)
        guard let session = result.session else { throw FixtureError("the registration of \(name) started no session") }
        // As the API's own answer would, wait until the read models show the new user: a read right after may
        // otherwise find no profile yet on a busy machine.
        try await backend.readModels.waitUntilApplied(result.position, timeout: Self.consistencyTimeout)
        return User(id: session.user.rawValue, token: backend.tokens.token(for: session.session), email: email)
    }

    /// Uploads a small PNG as `user`; returns its media id.
    func uploadImage(_ user: User) async throws -> String {
        let answer = try await call(
            .post, "/v1/media", token: user.token, body: SampleImages.png, headers: ["Content-Type": "image/png"])
        guard answer.status == .created, let id = answer.object["id"] as? String else {
            throw FixtureError("the upload answered \(answer.status)")
        }
        return id
    }

    func post(_ user: User, _ text: String) async throws -> String {
        let answer = try await call(.post, "/v1/posts", token: user.token, json: ["text": text])
        guard answer.status == .created, let id = answer.object["id"] as? String else {
            throw FixtureError("post failed: \(answer.status)")
        }
        return id
    }

    /// The log's head: what "nothing was appended" is checked against.
    var head: LogPosition { backend.log.head }
}

struct FixtureError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension APIFixture {
    /// The options of the test servers: `chorus serve`'s, with bcrypt at its lowest cost, no fixed port, an admin
    /// token, a shorter wait for read models, and warnings only in the log. `withAPI` gives each its own data
    /// directory.
    static var options: ServeOptions {
        var options = ServeOptions()
        options.server.port = 0
        options.server.publicBaseURL = "http://chorus.test"
        options.server.consistencyTimeout = consistencyTimeout
        options.server.adminToken = adminToken
        options.passwordHasher = PasswordHasher(cost: 4)
        options.logLevel = .warning
        return options
    }
}

/// Runs `body` against a server on a fresh data directory, built from `options` (``APIFixture/options`` changed as a
/// test needs) by the function `chorus serve` builds its server with.
func withAPI(
    _ setup: TestingSetup = .router, options: ServeOptions = APIFixture.options,
    _ body: @escaping @Sendable (APIFixture) async throws -> Void
) async throws {
    try await withTemporaryDirectory { directory in
        try await withAPI(setup, in: directory, options: options, body)
    }
}

/// ``withAPI(_:options:_:)`` on the data directory `directory`, as a server started again on it finds it.
func withAPI(
    _ setup: TestingSetup = .router, in directory: String, options: ServeOptions = APIFixture.options,
    _ body: @escaping @Sendable (APIFixture) async throws -> Void
) async throws {
    var options = options
    options.data = DataDirectory(directory)
    var logger = Logger(label: "chorus.test")
    logger.logLevel = options.logLevel
    try await ChorusApplication.run(options, logger: logger) { application, backend in
        // The test client runs the backend's services as `chorus serve` does, and shuts them down at the end.
        try await application.test(setup) { client in
            try await body(APIFixture(client: client, backend: backend))
        }
    }
}
