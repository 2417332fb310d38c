import Foundation
import JWTKit

extension DefaultJWTSerializer {
    /// Writes a JWT's times (`iat`, `exp`) in whole seconds, as Apple's and Google's examples send them; jwt-kit's
    /// default writes fractions.
    static var wholeSeconds: DefaultJWTSerializer {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .integerSecondsSince1970
        return DefaultJWTSerializer(jsonEncoder: encoder)
    }
}
