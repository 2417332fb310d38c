import Foundation

/// Lines of a file or of standard input, read a megabyte at a time straight into one buffer.
struct LineReader {
    private let handle: FileHandle
    private let name: String
    /// The bytes read and not yet handed out are `buffer[start..<end]`; the rest is room for the next read. A line
    /// longer than the buffer doubles it.
    private var buffer = [UInt8](repeating: 0, count: 1 << 20)
    private var start = 0
    private var end = 0
    private var ended = false
    /// Bytes handed out so far, for progress.
    private(set) var bytesRead = 0

    /// `path` "-" reads standard input.
    init(path: String) throws {
        if path == "-" {
            handle = .standardInput
            name = "standard input"
        } else {
            guard let handle = FileHandle(forReadingAtPath: path) else { throw OperatorError("cannot read \(path)") }
            self.handle = handle
            name = path
        }
    }

    /// Lends `body` the next line, without its newline, valid only inside it; false at the end, where `body` is not
    /// called. A last line without a newline counts.
    mutating func next(_ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        while true {
            let (start, end) = (self.start, self.end)
            let found = buffer.withUnsafeBytes { bytes -> Int? in
                guard start < end,
                    let newline = memchr(bytes.baseAddress! + start, Int32(UInt8(ascii: "\n")), end - start)
                else { return nil }
                return bytes.baseAddress!.distance(to: UnsafeRawPointer(newline))
            }
            if let newline = found {
                defer { self.start = newline + 1 }
                bytesRead += newline + 1 - start
                try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start..<newline])) }
                return true
            }
            if ended {
                guard start < end else { return false }
                defer { self.start = end }
                bytesRead += end - start
                try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
                return true
            }
            try readMore()
        }
    }

    /// Moves the partial line left to the front and reads what fits after it: with `read(2)` into the buffer, where
    /// `FileHandle` made a `Data` of each megabyte (fresh pages the kernel zeroed) to be copied in.
    private mutating func readMore() throws {
        if start > 0 {
            let (start, end) = (self.start, self.end)
            buffer.withUnsafeMutableBytes { bytes in
                bytes.baseAddress!.copyMemory(from: bytes.baseAddress! + start, byteCount: end - start)
            }
            (self.start, self.end) = (0, end - start)
        }
        if end == buffer.count { buffer += repeatElement(0, count: buffer.count) }
        let (end, fd) = (self.end, handle.fileDescriptor)
        let count = buffer.withUnsafeMutableBytes { bytes in
            while true {
                let count = read(fd, bytes.baseAddress! + end, bytes.count - end)
                if count >= 0 || errno != EINTR { return count }
            }
        }
        guard count >= 0 else { throw OperatorError("cannot read \(name): \(String(cString: strerror(errno)))") }
        if count == 0 { ended = true } else { self.end += count }
    }
}
