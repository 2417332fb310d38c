import Foundation

/// A streamed HTTP/1.1 response read over a plain socket: for Server-Sent Events, which never end, so a test client
/// that waits for the whole body cannot read them.
public final class RawHTTPStream: @unchecked Sendable {
    private let socket: Int32
    private var buffer: [UInt8] = []
    /// The de-chunked body read so far, and how far the test has consumed it.
    private var body: [UInt8] = []
    private var consumed = 0
    public private(set) var status = 0

    /// Connects to 127.0.0.1:`port`, sends a GET for `path`, and reads the response head.
    public init(port: Int, path: String, headers: [String: String]) throws {
        socket = try connectToLoopback(port: port)
        var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        _ = request.utf8CString.withUnsafeBufferPointer { send(socket, $0.baseAddress, $0.count - 1, 0) }
        try readHead()
    }

    deinit { close(socket) }

    /// The next SSE event or comment block (text up to a blank line).
    public func nextBlock() throws -> String {
        while true {
            if let end = findBlankLine() {
                let block = String(decoding: body[consumed..<end], as: UTF8.self)
                consumed = end + 2
                return block
            }
            try readChunk()
        }
    }

    /// The next event (comments skipped): its id, name and data.
    public func nextEvent() throws -> LiveEvent {
        while true {
            let block = try nextBlock()
            guard !block.hasPrefix(":") else { continue }
            return Self.event(block)
        }
    }

    /// The next `count` events; throws if they have not all come within `heartbeats` heartbeats.
    public func nextEvents(_ count: Int, heartbeats: Int = 20) throws -> [LiveEvent] {
        var events: [LiveEvent] = []
        var idle = 0
        while events.count < count {
            let block = try nextBlock()
            if block == ": heartbeat" {
                idle += 1
                guard idle < heartbeats else { throw StreamError("\(events.count) of \(count) events came") }
            } else if !block.hasPrefix(":") {
                events.append(Self.event(block))
            }
        }
        return events
    }

    /// Every event up to the first heartbeat: a stream sends all it has caught up with before it idles.
    public func eventsUntilHeartbeat() throws -> [LiveEvent] {
        var events: [LiveEvent] = []
        while true {
            let block = try nextBlock()
            if block == ": heartbeat" { return events }
            if !block.hasPrefix(":") { events.append(Self.event(block)) }
        }
    }

    private static func event(_ block: String) -> LiveEvent {
        var id: UInt64 = 0
        var name = ""
        var data: [String: Any] = [:]
        for line in block.split(separator: "\n") {
            if line.hasPrefix("id: ") { id = UInt64(line.dropFirst(4)) ?? 0 }
            if line.hasPrefix("event: ") { name = String(line.dropFirst(7)) }
            if line.hasPrefix("data: ") {
                data = (try? JSONSerialization.jsonObject(with: Data(line.dropFirst(6).utf8))) as? [String: Any] ?? [:]
            }
        }
        return LiveEvent(id: id, name: name, data: data)
    }

    private func findBlankLine() -> Int? {
        var index = consumed
        while index + 1 < body.count {
            if body[index] == 10, body[index + 1] == 10 { return index }
            index += 1
        }
        return nil
    }

    private func readHead() throws {
        while true {
            if let range = buffer.firstRange(of: Array("\r\n\r\n".utf8)) {
                let head = String(decoding: buffer[..<range.lowerBound], as: UTF8.self)
                status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
                buffer.removeSubrange(..<range.upperBound)
                return
            }
            try readMore()
        }
    }

    /// Moves one chunk of the chunked body from the socket buffer to `body`.
    private func readChunk() throws {
        while true {
            if let lineEnd = buffer.firstRange(of: Array("\r\n".utf8)) {
                let sizeText = String(decoding: buffer[..<lineEnd.lowerBound], as: UTF8.self)
                guard let size = Int(sizeText, radix: 16) else { throw StreamError("bad chunk size \(sizeText)") }
                guard size > 0 else { throw StreamError("the stream ended") }
                let start = lineEnd.upperBound
                if buffer.count >= start + size + 2 {
                    body += buffer[start..<start + size]
                    buffer.removeSubrange(..<(start + size + 2))
                    return
                }
            }
            try readMore()
        }
    }

    private func readMore() throws {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = receive(socket, into: &chunk)
        guard count > 0 else {
            if count == 0 { throw StreamError("the server closed the stream") }
            if errno == EAGAIN { throw StreamError("timed out reading") }
            throw StreamError("reading failed: \(String(cString: strerror(errno)))")
        }
        buffer += chunk[..<count]
    }
}

/// A TCP socket connected to 127.0.0.1:`port`, whose reads time out after 120 s: a bound for a server that never
/// answers, not a measure of one that answers late. The suite runs every test at once in this process, and tests that
/// compute on Swift concurrency's few threads have held an in-process server's tasks up for over 30 s.
public func connectToLoopback(port: Int) throws -> Int32 {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw StreamError("socket failed") }
    var timeout = timeval(tv_sec: 120, tv_usec: 0)
    setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard connected == 0 else {
        close(descriptor)
        throw StreamError("connect failed")
    }
    return descriptor
}

/// `recv` into `buffer`, tried again when a signal interrupts it: on a socket with a read timeout (SO_RCVTIMEO), Linux
/// ends the call with EINTR on any signal this process catches, SA_RESTART or not (signal(7)). Answers what `recv`
/// does otherwise: 0 when the peer closed, -1 with `errno` set (EAGAIN once the timeout passed, ECONNRESET on a
/// reset), which callers tell apart rather than call every failure a timeout.
public func receive(_ socket: Int32, into buffer: inout [UInt8]) -> Int {
    while true {
        let count = recv(socket, &buffer, buffer.count, 0)
        if count >= 0 || errno != EINTR { return count }
    }
}

/// One Server-Sent Event, its data parsed as JSON.
public struct LiveEvent: @unchecked Sendable {
    public let id: UInt64
    public let name: String
    public let data: [String: Any]
}

public struct StreamError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
