import Crypto
import Foundation

/// Signs webhooks as the Standard Webhooks specification says: `webhook-signature` is `v1,` and the base64 of the
/// HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` under the secret, which is given as `whsec_` and the
/// base64 of its bytes.
public struct WebhookSigner: Sendable {
    private let key: SymmetricKey

    /// Nil unless `secret` is `whsec_` and base64 of at least 16 bytes.
    public init?(secret: String) {
        guard secret.hasPrefix("whsec_"), let bytes = Data(base64Encoded: String(secret.dropFirst(6))),
            bytes.count >= 16
        else { return nil }
        key = SymmetricKey(data: bytes)
    }

    /// The `webhook-signature` header's value.
    public func signature(id: String, timestamp: Int64, body: [UInt8]) -> String {
        var mac = HMAC<SHA256>(key: key)
        mac.update(data: Array("\(id).\(timestamp).".utf8))
        mac.update(data: body)
        return "v1," + Data(mac.finalize()).base64EncodedString()
    }

    /// A new secret in the `whsec_` form, 32 random bytes.
    public static func makeSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return "whsec_" + Data(bytes).base64EncodedString()
    }
}
