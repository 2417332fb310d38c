import Foundation
import HTTPTypes
import Hummingbird

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A range of IP addresses written as CIDR (`10.0.0.0/8`, `fd00::/8`), or one address (`127.0.0.1`). IPv4 addresses are
/// kept as IPv6 maps them (`::ffff:a.b.c.d`), so that one comparison serves both.
public struct IPAddressRange: Sendable, Hashable, CustomStringConvertible {
    private let network: [UInt8]
    private let prefixLength: Int
    public let description: String

    /// Nil when `text` is not an address or a CIDR range.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let address = Self.bytes(of: String(parts[0])) else { return nil }
        let isIPv4 = !parts[0].contains(":")
        let maximum = isIPv4 ? 32 : 128
        var length = maximum
        if parts.count == 2 {
            guard let given = Int(parts[1]), (0...maximum).contains(given) else { return nil }
            length = given
        }
        prefixLength = isIPv4 ? 96 + length : length
        network = Self.masked(address, prefixLength)
        description = text
    }

    /// Whether `address` (text, IPv4 or IPv6) is in the range.
    public func contains(_ address: String) -> Bool {
        guard let bytes = Self.bytes(of: address) else { return false }
        return Self.masked(bytes, prefixLength) == network
    }

    /// The 16 bytes of an IPv6 address, or of an IPv4 one mapped into IPv6; nil for anything else.
    static func bytes(of text: String) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: 16)
        if text.contains(":") {
            var address = in6_addr()
            guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
            withUnsafeBytes(of: &address) { bytes = Array($0) }
        } else {
            var address = in_addr()
            guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
            bytes[10] = 0xFF
            bytes[11] = 0xFF
            withUnsafeBytes(of: &address) { bytes.replaceSubrange(12..<16, with: $0) }
        }
        return bytes
    }

    private static func masked(_ bytes: [UInt8], _ length: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let kept = min(8, max(0, length - index * 8))
            return kept == 8 ? byte : byte & ~(0xFF >> kept)
        }
    }
}

/// Finds who a request comes from, for the limits kept per address. Behind a reverse proxy every connection comes from
/// the proxy, and every limit per address would be one limit for everyone; the proxy says whom it forwards for in
/// `X-Forwarded-For`. That header is believed only from the proxies the operator names (`--trusted-proxies`):
/// walking it from the right, past the addresses of trusted proxies, the first other address is the client's. A
/// client cannot move that place by sending the header itself, since what it sends ends up on the left.
struct ClientAddressMiddleware: RouterMiddleware {
    typealias Context = ChorusRequestContext

    let trustedProxies: [IPAddressRange]

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        context.clientAddress = Self.client(
            peer: context.peerAddress, forwardedFor: request.headers[values: .xForwardedFor], trusting: trustedProxies)
        return try await next(request, context)
    }

    /// The client's address: `peer` unless it is a trusted proxy; then the rightmost address of the `X-Forwarded-For`
    /// fields (in order) that is not a trusted proxy's. When every one is trusted, the leftmost; when one is not an
    /// address at all, the trusted hop right of it (a proxy forwarding what it did not write): never a value the
    /// client chose.
    static func client(peer: String?, forwardedFor fields: [String], trusting trusted: [IPAddressRange]) -> String? {
        guard let peer, !trusted.isEmpty, isTrusted(peer, trusted) else { return peer }
        let hops = fields.flatMap { $0.split(separator: ",") }.map { hop in
            address(in: hop.trimmingCharacters(in: .whitespaces))
        }
        var client = peer
        for hop in hops.reversed() {
            guard let hop else { return client }
            client = hop
            if !isTrusted(hop, trusted) { return hop }
        }
        return client
    }

    private static func isTrusted(_ address: String, _ trusted: [IPAddressRange]) -> Bool {
        trusted.contains { $0.contains(address) }
    }

    /// The address in one hop of `X-Forwarded-For`: `1.2.3.4`, `1.2.3.4:5678`, `2001:db8::1` or `[2001:db8::1]:5678`;
    /// nil when it holds none.
    private static func address(in hop: String) -> String? {
        var text = Substring(hop)
        if text.hasPrefix("["), let end = text.firstIndex(of: "]") {
            text = text[text.index(after: text.startIndex)..<end]
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            text = text[..<colon]
        }
        let address = String(text)
        return IPAddressRange.bytes(of: address) == nil ? nil : address
    }
}

extension HTTPField.Name {
    static let xForwardedFor = Self("X-Forwarded-For")!
}
