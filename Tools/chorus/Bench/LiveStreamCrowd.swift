import Foundation
import Synchronization

/// Many users' live streams held open at once, all read on one thread, counting the events they receive: the open
/// connections of an app's users while they look at their screens.
final class LiveStreamCrowd: Sendable {
    private let descriptors: [Int32]
    private let received = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)
    private let finished = Mutex<Bool>(false)

    /// Opens one stream of `topics` for each of `tokens` on the server at `port` of this machine.
    init(port: Int, topics: String, tokens: [String]) throws {
        var descriptors: [Int32] = []
        do {
            for token in tokens {
                descriptors.append(
                    try EventStreamReader.open(port: port, path: "/v1/live?topics=\(topics)", token: token))
            }
        } catch {
            for descriptor in descriptors { Glibc.close(descriptor) }
            throw error
        }
        self.descriptors = descriptors
        Thread { [self] in read() }.start()
    }

    /// Events received so far, on all the streams together.
    var events: Int { received.load(ordering: .relaxed) }

    /// Closes every stream.
    func close() {
        stopped.store(true, ordering: .relaxed)
        while !finished.withLock({ $0 }) { usleep(10_000) }
        for descriptor in descriptors { Glibc.close(descriptor) }
    }

    private func read() {
        // Each stream's progress through "\nevent:", the line that starts an event (the answer's head has none).
        let marker = Array("\nevent:".utf8)
        var matched = [Int](repeating: 0, count: descriptors.count)
        var polled = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !stopped.load(ordering: .relaxed) {
            guard poll(&polled, nfds_t(polled.count), 100) > 0 else { continue }
            for index in polled.indices where polled[index].revents != 0 {
                let count = recv(polled[index].fd, &buffer, buffer.count, 0)
                guard count > 0 else {
                    polled[index].fd = -1  // ended: poll skips it from now on
                    continue
                }
                var events = 0
                for byte in buffer[..<count] {
                    if byte == marker[matched[index]] {
                        matched[index] += 1
                        if matched[index] == marker.count {
                            events += 1
                            matched[index] = 0
                        }
                    } else {
                        matched[index] = byte == marker[0] ? 1 : 0
                    }
                }
                received.add(events, ordering: .relaxed)
            }
        }
        finished.withLock { $0 = true }
    }
}
