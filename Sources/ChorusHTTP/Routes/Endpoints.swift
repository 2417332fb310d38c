import ChorusBackend
import ChorusDomain
import ChorusLog
import ChorusProjections
import HTTPTypes
import Hummingbird

/// What every route shares: the backend, how objects are rendered, and the two shapes of a request — a read of one
/// snapshot, and a command followed by a read of its effect — with the consistency and idempotency rules of
/// openapi.yaml.
struct Endpoints: Sendable {
    typealias Context = ChorusRequestContext

    let backend: ChorusBackend
    let renderer: ObjectRenderer
    /// How long a read waits for `Chorus-Min-Position`, and a write for the read models to show its effect.
    let consistencyTimeout: Duration
    /// Pages of posts kept as rendered while what they show is unchanged; nil keeps none.
    let pages: RenderedPages?
    /// How often sign-ins, resets and writes may be done.
    let limiters: Limiters

    // MARK: Reads

    /// Answers what `write` writes from one snapshot, after waiting for `Chorus-Min-Position` if it was sent.
    func read(_ request: Request, _ write: (borrowing ReadView, inout JSONWriter) throws -> Void) async throws
        -> Response
    {
        try await waitForMinimumPosition(request)
        let snapshot = try backend.readModels.snapshot { view in try Self.bytes(view, write) }
        return Self.json(.ok, snapshot.answer, position: snapshot.position)
    }

    /// Waits until the read models have applied the request's `Chorus-Min-Position`, if it sent one.
    private func waitForMinimumPosition(_ request: Request) async throws {
        if let minimum = try Self.minimumPosition(request) {
            try await backend.readModels.waitUntilApplied(minimum, timeout: consistencyTimeout)
        }
    }

    /// What `write` writes of `view`.
    private static func bytes(
        _ view: borrowing ReadView, _ write: (borrowing ReadView, inout JSONWriter) throws -> Void
    )
        throws -> [UInt8]
    {
        var json = JSONWriter()
        try write(view, &json)
        return json.bytes
    }

    /// ``read(_:_:)`` for a page of `caller`'s: the page kept for this caller and request when nothing it shows has
    /// changed since (``RenderedPages``), or else read, kept and answered; gzipped for a client that takes it
    /// (``EncodedBody``).
    func readPage(_ request: Request, caller: Caller, _ write: (borrowing ReadView, inout JSONWriter) throws -> Void)
        async throws -> Response
    {
        try await waitForMinimumPosition(request)
        let gzip = EncodedBody.isAccepted(by: request.headers)
        guard let pages else {
            let snapshot = try backend.readModels.snapshot { view in try Self.bytes(view, write) }
            return Self.page(EncodedBody(ByteBuffer(bytes: snapshot.answer), gzip: gzip), position: snapshot.position)
        }
        let key = RenderedPages.Key(caller: caller.user.rawValue, target: request.uri.description)
        if let kept = pages.page(for: key, on: backend.readModels, gzip: gzip) {
            backend.metrics.recordPage(reused: true)
            return Self.page(kept.body, position: kept.position)
        }
        let (snapshot, footprint) = try backend.readModels.snapshotWithFootprint { view in try Self.bytes(view, write) }
        let body = pages.keep(ByteBuffer(bytes: snapshot.answer), read: footprint, for: key, gzip: gzip)
        backend.metrics.recordPage(reused: false)
        return Self.page(body, position: snapshot.position)
    }

    /// A page of ``readPage(_:caller:_:)``: which encoding answers depends on the request's `Accept-Encoding`.
    private static func page(_ body: EncodedBody, position: LogPosition) -> Response {
        var response = json(.ok, body.bytes, position: position)
        response.headers[.vary] = "Accept-Encoding"
        if body.isGzipped { response.headers[.contentEncoding] = "gzip" }
        return response
    }

    /// Answers `render`'s object from one snapshot, as the read above.
    func read(_ request: Request, _ render: (borrowing ReadView) throws -> some JSONWritable) async throws -> Response {
        try await read(request) { view, json in try render(view).write(to: &json) }
    }

    /// Adds `GET path`: a page of the caller's list that `list` reads, rendered item by item.
    func getPage<Item>(
        _ group: RouterGroup<Context>, _ path: RouterPath,
        _ list: @escaping @Sendable (borrowing ReadView, Caller, PageRequest) throws -> Page<Item>,
        render: @escaping @Sendable (Item) -> some JSONWritable
    ) {
        group.get(path) { request, context in
            let caller = try context.requireCaller()
            let page = try Self.page(request)
            return try await read(request) { view in renderer.page(try list(view, caller, page), render) }
        }
    }

    /// Adds `GET path`: a page of posts that `list` lends in place, rendered as they come; `?media=true` asks for the
    /// posts with an image only (the Instagram grid).
    func getPostPage(
        _ group: RouterGroup<Context>, _ path: RouterPath,
        _ list:
            @escaping @Sendable (
                borrowing ReadView, Caller, PostKind, PageRequest, (borrowing StoredPost) throws -> Void
            ) throws -> PageEnd
    ) {
        group.get(path) { request, context in
            let caller = try context.requireCaller()
            let page = try Self.page(request)
            let kind = try Self.mediaKind(request)
            return try await readPage(request, caller: caller) { view, json in
                _ = try renderer.writePostPage(to: &json) { try list(view, caller, kind, page, $0) }
            }
        }
    }

    /// `?media=true` of a list of posts: those with an image only; `false` or none, all.
    static func mediaKind(_ request: Request) throws -> PostKind {
        switch request.uri.queryParameters["media"] {
        case nil, "false": .all
        case "true": .media
        default: throw APIError.badRequest("media must be true or false")
        }
    }

    /// `?kind=all|original|reposts|media` of a posts tab (all when missing); anything else is `400 bad_request`.
    static func postKind(_ request: Request) throws -> PostKind {
        guard let text = request.uri.queryParameters["kind"] else { return .all }
        guard let kind = PostKind(rawValue: String(text)) else {
            throw APIError.badRequest("kind must be all, original, reposts or media")
        }
        return kind
    }

    // MARK: Writes

    /// Executes the command, waits until the read models show it, and answers `render`'s object with the command's
    /// position. With an `Idempotency-Key`, the first response is kept and a retry of the same request gets it again.
    func write(
        _ request: Request, context: Context, requestBody: [UInt8] = [], status: HTTPResponse.Status = .ok,
        command: Command, render: (borrowing ReadView, CommandResult, inout JSONWriter) throws -> Void
    ) async throws -> Response {
        try await respond(request, context: context, requestBody: requestBody, command: command) {
            (status, try await self.render(after: $0, render))
        }
    }

    /// The write above for an answer whose status depends on what the command did: `render` returns it.
    func write(
        _ request: Request, context: Context, requestBody: [UInt8] = [], command: Command,
        renderWithStatus render: (borrowing ReadView, CommandResult, inout JSONWriter) throws -> HTTPResponse.Status
    ) async throws -> Response {
        try await respond(request, context: context, requestBody: requestBody, command: command) { result in
            var status = HTTPResponse.Status.ok
            let body = try await self.render(after: result) { view, result, json in
                status = try render(view, result, &json)
            }
            return (status, body)
        }
    }

    /// The write above for a command that answers no object: 204 once the read models show it.
    func writeAnsweringNothing(_ request: Request, context: Context, command: Command) async throws -> Response {
        try await respond(request, context: context, requestBody: [], command: command) { result in
            try await backend.readModels.waitUntilApplied(result.position, timeout: consistencyTimeout)
            return (.noContent, [])
        }
    }

    /// Executes the command (or finds its first response under the request's idempotency key) and answers the status
    /// and body `answer` makes of its result.
    private func respond(
        _ request: Request, context: Context, requestBody: [UInt8], command: Command,
        answer: (CommandResult) async throws -> (HTTPResponse.Status, [UInt8])
    ) async throws -> Response {
        let key = try Self.idempotencyKey(request)
        let caller = try context.requireCaller()
        let digest = StoredResponses.digest(
            method: request.method.rawValue, path: request.uri.description, body: requestBody)
        if let key, let first = try backend.responses.response(caller: caller.user.rawValue, key: key) {
            guard first.requestDigest == digest else {
                throw APIError(DomainError(.idempotencyConflict, "idempotency key \(key) was used for another request"))
            }
            return Self.json(HTTPResponse.Status(code: first.status), first.body, position: first.position)
        }
        let result = try await backend.execute(command, idempotencyKey: key)
        let (status, body) = try await answer(result)
        if let key {
            try backend.responses.keep(
                .init(requestDigest: digest, status: status.code, position: result.position, body: body),
                caller: caller.user.rawValue, key: key)
        }
        return Self.json(status, body, position: result.position)
    }

    /// The write above, answering `render`'s object.
    func write(
        _ request: Request, context: Context, requestBody: [UInt8] = [], status: HTTPResponse.Status = .ok,
        command: Command, render: (borrowing ReadView, CommandResult) throws -> some JSONWritable
    ) async throws -> Response {
        try await write(request, context: context, requestBody: requestBody, status: status, command: command) {
            view, result, json in try render(view, result).write(to: &json)
        }
    }

    /// Waits until the read models have applied `result`, then renders from a snapshot that shows it.
    func render(
        after result: CommandResult, _ render: (borrowing ReadView, CommandResult, inout JSONWriter) throws -> Void
    ) async throws -> [UInt8] {
        try await backend.readModels.waitUntilApplied(result.position, timeout: consistencyTimeout)
        return try backend.readModels.snapshot { view in
            var json = JSONWriter()
            try render(view, result, &json)
            return json.bytes
        }.answer
    }

    /// The event a command appended at `position`, as recorded: for answers made from what was written, such as a
    /// new comment.
    func event(at position: LogPosition) throws -> (event: DomainEvent, time: EventTime) {
        guard let recorded = try backend.log.event(at: position) else {
            throw APIError.unavailable("no event at position \(position)")
        }
        return (try DomainEvent(decoding: recorded, keys: backend.keys), recorded.recordedAt)
    }

    // MARK: Request parts

    /// `?limit=1..100&cursor=…`; anything else is `400 bad_request`.
    static func page(_ request: Request) throws -> PageRequest {
        let query = request.uri.queryParameters
        var limit = 20
        if let text = query["limit"] {
            guard let value = Int(text), PageRequest.limits.contains(value) else {
                throw APIError.badRequest("limit must be a whole number from 1 to 100")
            }
            limit = value
        }
        var cursor: PageCursor?
        // An empty cursor is none, as a client that echoes `nextCursor` into the query may send one.
        if let text = query["cursor"], !text.isEmpty {
            guard let parsed = PageCursor(String(text)) else { throw APIError.badRequest("the cursor is not valid") }
            cursor = parsed
        }
        return PageRequest(limit: limit, cursor: cursor)
    }

    /// `?order=asc|desc`.
    static func order(_ request: Request, default fallback: SortOrder) throws -> SortOrder {
        switch request.uri.queryParameters["order"] {
        case nil: fallback
        case "asc": .oldestFirst
        case "desc": .newestFirst
        case let other?: throw APIError.badRequest("order must be asc or desc, not \(other)")
        }
    }

    /// An id from the path; a malformed one names nothing, so it is `404 not_found`.
    static func pathID<ID: ChorusIdentifier>(_ context: Context, _ name: String, as type: ID.Type) throws -> ID {
        guard let text = context.parameters.get(name), let id = ID(text) else {
            throw APIError.notFound("no such \(name)")
        }
        return id
    }

    /// The case of `Value` that `text` names, or `422 invalid_field` naming the values `field` takes.
    static func choice<Value: RawRepresentable & CaseIterable>(_ text: String, field: String) throws -> Value
    where Value.RawValue == String {
        guard let value = Value(rawValue: text) else {
            let values = Value.allCases.map(\.rawValue).joined(separator: ", ")
            throw APIError(DomainError(.invalidField, "\(field): one of \(values)"))
        }
        return value
    }

    static func minimumPosition(_ request: Request) throws -> LogPosition? {
        guard let text = request.headers[.chorusMinPosition] else { return nil }
        guard let value = UInt64(text.trimmingCharacters(in: .whitespaces)) else {
            throw APIError.badRequest("Chorus-Min-Position must be a log position (a whole number)")
        }
        return LogPosition(value)
    }

    /// 1 to 128 visible ASCII characters.
    static func idempotencyKey(_ request: Request) throws -> String? {
        guard let key = request.headers[.idempotencyKey] else { return nil }
        guard (1...128).contains(key.utf8.count), key.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw APIError.badRequest("Idempotency-Key must be 1 to 128 visible ASCII characters")
        }
        return key
    }

    /// An answer with `body` (none for 204).
    static func json(_ status: HTTPResponse.Status, _ body: [UInt8], position: LogPosition?) -> Response {
        json(status, ByteBuffer(bytes: body), position: position)
    }

    static func json(_ status: HTTPResponse.Status, _ body: ByteBuffer, position: LogPosition?) -> Response {
        var headers = HTTPFields()
        if status != .noContent { headers[.contentType] = "application/json; charset=utf-8" }
        if let position { headers[.chorusPosition] = String(position.rawValue) }
        return Response(status: status, headers: headers, body: .init(byteBuffer: body))
    }
}

extension HTTPField.Name {
    static let chorusPosition = Self("Chorus-Position")!
    static let chorusMinPosition = Self("Chorus-Min-Position")!
    static let idempotencyKey = Self("Idempotency-Key")!
    static let lastEventID = Self("Last-Event-ID")!
}
