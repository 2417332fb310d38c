import ChorusLog
import Foundation
import Hummingbird

/// What operators and tools call: health, the contract, and the admin routes (admin token only).
struct OperationsRoutes {
    let endpoints: Endpoints
    let adminToken: String?

    struct Health: Encodable {
        let status: String
        let position: UInt64
        let projections: [String: UInt64]
    }

    func add(to router: Router<ChorusRequestContext>) {
        let backend = endpoints.backend
        router.get("/health") { _, _ in
            let health = Health(
                status: "ok", position: backend.log.head.rawValue,
                projections: ["readModels": backend.projections.position.rawValue])
            return Endpoints.json(.ok, JSONBody.encode(health), position: backend.projections.position)
        }
        router.get("/openapi.yaml") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "application/yaml; charset=utf-8"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: OpenAPIDocument.bytes)))
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
