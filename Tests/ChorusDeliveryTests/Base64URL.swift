import Foundation
import Testing

/// The bytes of a JWT's part, as a receiver decodes them: base64url without padding (RFC 7515).
func base64URLDecoded(_ text: String) throws -> Data {
    var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
    return try #require(Data(base64Encoded: base64))
}
