import ChorusBackend
import ChorusDelivery
import ChorusLog
import ChorusProjections
import Foundation
import Hummingbird

/// What operators and tools call: health (its positions for the admin token only), metrics and the admin routes (admin
/// token only), and the contract.
struct OperationsRoutes {
    let endpoints: Endpoints
    let adminToken: String?
    /// The outboxes of webhooks and pushes, those configured.
    let deliveries: Deliveries

    /// `GET /v1/admin/webhooks`.
    struct WebhookStatus: JSONWritable {
        let enabled: Bool
        let status: WebhookOutbox.Status

        func write(to json: inout JSONWriter) {
            json.object {
                $0.field("enabled", enabled)
                $0.field("delivered", status.delivered)
                $0.field("pending", status.pending)
                $0.field("failing", status.failing)
                $0.field("abandoned", status.abandoned)
                $0.field("lastError", status.lastError)
            }
        }
    }

    /// `GET /v1/admin/push`.
    struct PushStatus: JSONWritable {
        let apns: Bool
        let fcm: Bool
        let sending: Bool
        let devices: Int
        let status: PushOutbox.Status

        func write(to json: inout JSONWriter) {
            json.object {
                $0.field("apns", apns)
                $0.field("fcm", fcm)
                $0.field("sending", sending)
                $0.field("devices", devices)
                $0.field("delivered", status.delivered)
                $0.field("pending", status.pending)
                $0.field("failing", status.failing)
                $0.field("removedTokens", status.removed)
                $0.field("lastError", status.lastError)
            }
        }
    }

    struct ProjectionStatus: JSONWritable {
        let name: String
        let position: UInt64
        let head: UInt64
        let lag: UInt64
        /// `rebuilding` while an online rebuild runs beside it; else `live` when caught up with the log, `catching_up`
        /// otherwise.
        let state: String
        let eventsPerSecond: Double
        /// While rebuilding: events replayed into the new read models, of how many.
        let rebuildProgress: (replayed: Int, total: Int)?
        /// How the last online rebuild since the server started ended, if one did.
        let lastRebuild: ServedReadModels.RebuildState

        func write(to json: inout JSONWriter) {
            json.object {
                $0.field("name", name)
                $0.field("position", position)
                $0.field("head", head)
                $0.field("lag", lag)
                $0.field("state", state)
                $0.field("eventsPerSecond", eventsPerSecond)
                if let rebuildProgress {
                    $0.field(
                        "rebuildProgress",
                        RebuildProgress(replayed: rebuildProgress.replayed, total: rebuildProgress.total))
                }
                switch lastRebuild {
                case .finished(let position, let at):
                    $0.field(
                        "lastRebuild", LastRebuild(outcome: "finished", position: position.rawValue, at: at, error: nil)
                    )
                case .failed(let reason):
                    $0.field("lastRebuild", LastRebuild(outcome: "failed", position: nil, at: nil, error: reason))
                case .none, .rebuilding:
                    break
                }
            }
        }
    }

    struct RebuildProgress: JSONWritable {
        let replayed: Int
        let total: Int

        func write(to json: inout JSONWriter) {
            json.object {
                $0.field("replayed", replayed)
                $0.field("total", total)
            }
        }
    }

    struct LastRebuild: JSONWritable {
        let outcome: String
        let position: UInt64?
        let at: EventTime?
        let error: String?

        func write(to json: inout JSONWriter) {
            json.object {
                $0.field("outcome", outcome)
                if let position { $0.field("position", position) }
                if let at { $0.field("at", at) }
                if let error { $0.field("error", error) }
            }
        }
    }

    /// `GET /health`: the log's head and the read models' position only for the admin token. Anyone may ask whether
    /// the server is up, but positions counted from outside tell what happened inside (a password reset that found
    /// an account moved the head by one), and how busy the app is.
    struct Health: JSONWritable {
        /// The log's head and the read models' positions; nil for anyone without the admin token.
        let positions: (head: UInt64, projections: [String: UInt64])?

        func write(to json: inout JSONWriter) {
            json.object { body in
                body.field("status", "ok")
                if let positions {
                    body.field("position", positions.head)
                    body.field("projections", Members(members: positions.projections))
                }
            }
        }
    }

    /// An object of names known at run time.
    struct Members: JSONWritable {
        let members: [String: UInt64]

        func write(to json: inout JSONWriter) {
            json.object { body in
                for (name, value) in members.sorted(by: { $0.key < $1.key }) { body.field(named: name, value) }
            }
        }
    }

    /// `{"projections": [ProjectionStatus]}`.
    struct Statuses: JSONWritable {
        let projections: [ProjectionStatus]

        func write(to json: inout JSONWriter) {
            json.object { $0.field("projections", projections) }
        }
    }

    static func status(of backend: ChorusBackend) -> Statuses {
        let projections = backend.projections
        let state =
            if case .rebuilding = backend.readModels.rebuildState { "rebuilding" } else if projections.lag == 0 {
                "live"
            } else { "catching_up" }
        return Statuses(projections: [
            ProjectionStatus(
                name: "readModels", position: projections.position.rawValue, head: backend.log.head.rawValue,
                lag: projections.lag, state: state, eventsPerSecond: projections.eventsPerSecond.rounded(),
                rebuildProgress: backend.readModels.rebuildProgress, lastRebuild: backend.readModels.rebuildState)
        ])
    }

    func add(to router: Router<ChorusRequestContext>) {
        let backend = endpoints.backend
        router.get("/health") { [adminToken] request, _ in
            guard AdminMiddleware.presentsAdminToken(request, adminToken: adminToken) else {
                return Endpoints.json(.ok, JSONBody.encode(Health(positions: nil)), position: nil)
            }
            let health = Health(
                positions: (backend.log.head.rawValue, ["readModels": backend.projections.position.rawValue]))
            return Endpoints.json(.ok, JSONBody.encode(health), position: backend.projections.position)
        }
        // Counters tell what happens inside (sign-ups, resets, how busy the app is): Prometheus scrapes with the admin
        // token as its bearer token.
        let operators = router.group().add(middleware: AdminMiddleware(adminToken: adminToken, backend: backend))
        operators.get("/metrics") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            let text = backend.metrics.render(
                logHead: backend.log.head, projectionPosition: backend.projections.position,
                eventsPerSecond: backend.projections.eventsPerSecond)
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: text)))
        }
        let admin = router.group("v1/admin").add(middleware: AdminMiddleware(adminToken: adminToken, backend: backend))
        admin.get("projections") { _, _ in
            Endpoints.json(.ok, JSONWriter.encode(Self.status(of: backend)), position: backend.projections.position)
        }
        ReportRoutes(endpoints: endpoints).addAdmin(to: admin)
        AccountRoutes(endpoints: endpoints).addAdmin(to: admin)
        admin.get("webhooks") { [deliveries] _, _ in
            let status = try deliveries.webhooks?.status() ?? .none
            return Endpoints.json(
                .ok, JSONWriter.encode(WebhookStatus(enabled: deliveries.webhooks != nil, status: status)),
                position: backend.projections.position)
        }
        admin.get("push") { [deliveries] _, _ in
            let devices = try backend.readModels.snapshot { try $0.deviceCount() }
            let status = PushStatus(
                apns: deliveries.push?.apns != nil, fcm: deliveries.push?.fcm != nil,
                sending: deliveries.pushTurn?.isSending ?? false, devices: devices.answer,
                status: try deliveries.pushes?.status() ?? .none)
            return Endpoints.json(.ok, JSONWriter.encode(status), position: devices.position)
        }
        admin.post("projections/rebuild") { _, _ in
            backend.readModels.requestRebuild()
            return Endpoints.json(
                .accepted, JSONWriter.encode(Self.status(of: backend)), position: backend.projections.position)
        }
        router.get("/openapi.yaml") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "application/yaml; charset=utf-8"
            return Response(
                status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: OpenAPIDocument.bytes)))
        }
    }
}

/// The contract, `openapi.yaml` at the repository root, as the server serves it.
enum OpenAPIDocument {
    static let bytes: [UInt8] = {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml"),
            let data = try? Data(contentsOf: url)
        else { return Array("openapi: 3.1.0\n# openapi.yaml was not bundled with this build\n".utf8) }
        return Array(data)
    }()
}
