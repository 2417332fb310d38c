import Foundation
import PostgresNIO

/// Where the cluster's PostgreSQL is: `postgresql://user[:password]@host[:port]/database` (`postgres://` too). TLS is
/// not used: the address is for a database on a private network or loopback.
public struct ClusterAddress: Sendable, CustomStringConvertible {
    public let host: String
    public let port: Int
    public let user: String
    public let password: String?
    public let database: String

    /// - Throws: ``ClusterError`` naming what is wrong with `url`.
    public init(_ url: String) throws {
        guard let components = URLComponents(string: url), let scheme = components.scheme,
            ["postgresql", "postgres"].contains(scheme)
        else {
            throw ClusterError("a cluster address is postgresql://user@host:port/database, not \(url)")
        }
        guard let host = components.host, !host.isEmpty else { throw ClusterError("\(url) names no host") }
        guard let user = components.user, !user.isEmpty else { throw ClusterError("\(url) names no user") }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty else { throw ClusterError("\(url) names no database") }
        self.host = host
        self.port = components.port ?? 5432
        self.user = user.removingPercentEncoding ?? user
        self.password = components.password.map { $0.removingPercentEncoding ?? $0 }
        self.database = database
    }

    /// The address without its password, for logs.
    public var description: String { "postgresql://\(user)@\(host):\(port)/\(database)" }

    /// A pool's configuration. `lockTimeout` bounds how long a statement waits for a lock (an append waits for the
    /// head row): past it the statement fails instead of hanging.
    func clientConfiguration(lockTimeout: Duration) -> PostgresClient.Configuration {
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: user, password: password, database: database, tls: .disable)
        configuration.options.additionalStartupParameters = [
            (
                "lock_timeout",
                "\(lockTimeout.components.seconds * 1000 + lockTimeout.components.attoseconds / 1_000_000_000_000_000)ms"
            ),
            ("application_name", "chorus"),
        ]
        configuration.options.connectTimeout = .seconds(5)
        return configuration
    }

    /// One connection's configuration (the listener's).
    func connectionConfiguration() -> PostgresConnection.Configuration {
        PostgresConnection.Configuration(
            host: host, port: port, username: user, password: password, database: database, tls: .disable)
    }
}
