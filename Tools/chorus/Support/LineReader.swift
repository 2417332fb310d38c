import Foundation

/// Lines of a file or of standard input, a megabyte read at a time.
struct LineReader {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    /// Where the next line starts in `buffer`.
    private var start = 0
    private var ended = false
    /// Bytes handed out so far, for progress.
    private(set) var bytesRead = 0

    /// `path` "-" reads standard input.
    init(path: String) throws {
        if path == "-" {
            handle = .standardInput
        } else {
            guard let handle = FileHandle(forReadingAtPath: path) else { throw OperatorError("cannot read \(path)") }
            self.handle = handle
        }
    }

    /// Lends `body` the next line, without its newline, valid only inside it; false at the end, where `body` is not
    /// called. A last line without a newline counts.
    mutating func next(_ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        while true {
            let found = buffer.withUnsafeBytes { bytes -> Int? in
                guard start < bytes.count,
                    let newline = memchr(bytes.baseAddress! + start, Int32(UInt8(ascii: "\n")), bytes.count - start)
                else { return nil }
                return bytes.baseAddress!.distance(to: UnsafeRawPointer(newline))
            }
            if let newline = found {
                defer { start = newline + 1 }
                bytesRead += newline + 1 - start
                try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start..<newline])) }
                return true
            }
            if ended {
                guard start < buffer.count else { return false }
                defer { start = buffer.count }
                bytesRead += buffer.count - start
                try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start...])) }
                return true
            }
            // The partial line left moves to the front, and a megabyte more comes after it.
            buffer.removeSubrange(0..<start)
            start = 0
            if let more = try handle.read(upToCount: 1 << 20), !more.isEmpty {
                buffer.append(contentsOf: more)
            } else {
                ended = true
            }
        }
    }
}
