import Glibc
import Synchronization

/// A TCP port on the loopback interface for a child to listen on: a server a test or benchmark starts, PostgreSQL, a
/// webhook receiver.
public enum LoopbackPort {
    /// Every port ``free()`` handed out in this process.
    private static let handedOut = Mutex<Set<Int>>([])

    /// A port nothing listens on now, and never handed out before in this process: the kernel's pick for a socket
    /// bound to port 0 is free again once the socket closes, and was seen picked twice while the first taker (a webhook
    /// receiver still down, a server starting) had not bound it yet.
    public static func free() throws -> Int {
        for _ in 0..<100 {
            let port = try kernelsPick()
            if handedOut.withLock({ $0.insert(port).inserted }) { return port }
        }
        throw LoopbackPortError(description: "no port the kernel picked was new to this process")
    }

    private static func kernelsPick() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else { throw LoopbackPortError(description: "could not find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

public struct LoopbackPortError: Error, CustomStringConvertible {
    public let description: String
}
