import Crypto
import Foundation
import NIOSSL
import X509

/// A certificate authority made for one test or benchmark, valid for an hour, and a certificate it issued for
/// `localhost`: what a local APNs or FCM peer serves, and what `CHORUS_PUSH_CA_FILE` makes the sender trust.
package struct LocalCertificateAuthority: Sendable {
    /// The authority's certificate, PEM, written to a file for the sender.
    package let caPEM: String
    package let serverTLS: TLSConfiguration

    package init() throws {
        let now = Date()
        let caKey = P256.Signing.PrivateKey()
        let caName = try DistinguishedName { CommonName("Chorus test CA") }
        let ca = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(caKey.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(3600),
            issuer: caName, subject: caName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true))
            }, issuerPrivateKey: .init(caKey))
        let serverKey = P256.Signing.PrivateKey()
        let server = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(serverKey.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(3600),
            issuer: caName, subject: try DistinguishedName { CommonName("localhost") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                SubjectAlternativeNames([.dnsName("localhost")])
                try ExtendedKeyUsage([.serverAuth])
            }, issuerPrivateKey: .init(caKey))
        caPEM = try ca.serializeAsPEM().pemString
        serverTLS = TLSConfiguration.makeServerConfiguration(
            certificateChain: [
                .certificate(
                    try NIOSSLCertificate(bytes: Array(try server.serializeAsPEM().pemString.utf8), format: .pem))
            ],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(serverKey.pemRepresentation.utf8), format: .pem)))
    }
}
