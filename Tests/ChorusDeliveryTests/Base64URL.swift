import Foundation
import Testing

/// The bytes of a JWT's part, as a receiver decodes them: base64url without padding (RFC 7515).
func base64URLDecoded(_ text: String) throws -> Data {
    try #require(base64URLData(text))
}

/// ``base64URLDecoded(_:)``, nil for what is not base64url: for a peer, which answers a bad token rather than fails.
func base64URLData(_ text: String) -> Data? {
    var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
    return Data(base64Encoded: base64)
}
