import ChorusPushPeers
import Foundation
import Testing

/// The bytes of a JWT's part, as a receiver decodes them: base64url without padding (RFC 7515).
func base64URLDecoded(_ text: String) throws -> Data {
    try #require(base64URLData(text))
}
