import Foundation

/// Lines of a file or of standard input, read a megabyte at a time, without their newlines.
struct LineReader {
    private let handle: FileHandle
    private var buffer = Data()
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

    /// The next line, nil at the end; a last line without a newline counts.
    mutating func next() throws -> Data? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[buffer.startIndex..<newline]
                buffer = buffer[(newline + 1)...]
                bytesRead += line.count + 1
                return Data(line)
            }
            if ended {
                guard !buffer.isEmpty else { return nil }
                defer { buffer = Data() }
                bytesRead += buffer.count
                return Data(buffer)
            }
            if let more = try handle.read(upToCount: 1 << 20), !more.isEmpty {
                buffer = Data(buffer) + more
            } else {
                ended = true
            }
        }
    }
}
