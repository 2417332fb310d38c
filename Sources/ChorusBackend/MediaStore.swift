import ChorusDomain
import ChorusLog
import ChorusStorage
import Crypto
import Foundation
import Synchronization

/// The image types the HTTP contract (openapi.yaml) accepts, told apart by their first bytes as well as by what the
/// client claims.
public enum MediaType: String, Sendable, CaseIterable {
    case jpeg = "image/jpeg"
    case png = "image/png"
    case gif = "image/gif"
    case webp = "image/webp"

    var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .png: "png"
        case .gif: "gif"
        case .webp: "webp"
        }
    }

    /// The type the bytes start like, if any: 12 bytes are enough to tell.
    static func sniff(_ head: some Collection<UInt8>) -> MediaType? {
        let bytes = Array(head.prefix(12))
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + prefix.count && Array(bytes[offset..<offset + prefix.count]) == prefix
        }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return .gif }
        if starts(Array("RIFF".utf8)), starts(Array("WEBP".utf8), at: 8) { return .webp }
        return nil
    }
}

/// Uploaded images, content-addressed under one directory: a file's name is its id (from the SHA-256 of its bytes)
/// and its type's extension, so the same bytes uploaded twice are one file, and a stored file never changes. Ids come
/// from clients only after ``ChorusIdentifier/init(_:)`` has checked their form, so no path can leave the folder.
public final class MediaStore: MediaCatalog {
    public static let maximumSize = 10 << 20

    public let directory: String
    /// Every stored id and its type, read from the folder at start.
    private let index: Mutex<[MediaID: MediaType]>

    public init(directory: String) throws {
        self.directory = directory
        let files = FileManager.default
        try files.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var found: [MediaID: MediaType] = [:]
        for name in try files.contentsOfDirectory(atPath: directory) {
            if name.hasPrefix(".upload-") {
                // Left by a crash mid-upload.
                try? files.removeItem(atPath: directory + "/" + name)
                continue
            }
            let parts = name.split(separator: ".")
            guard parts.count == 2, let id = MediaID(String(parts[0])),
                let type = MediaType.allCases.first(where: { $0.fileExtension == parts[1] })
            else { continue }
            found[id] = type
        }
        index = Mutex(found)
    }

    public func contains(_ media: MediaID) -> Bool { index.withLock { $0[media] != nil } }

    /// The stored type and file of `media`, if stored.
    public func file(of media: MediaID) -> (type: MediaType, path: String)? {
        guard let type = index.withLock({ $0[media] }) else { return nil }
        return (type, path(media, type))
    }

    /// Starts an upload into a temporary file.
    public func beginUpload() throws -> MediaUpload {
        try MediaUpload(directory: directory, store: self)
    }

    /// Records a file that ``MediaUpload/finish(declared:)`` has put in place.
    fileprivate func didStore(_ media: MediaID, _ type: MediaType) {
        index.withLock { $0[media] = type }
    }

    fileprivate func path(_ media: MediaID, _ type: MediaType) -> String {
        directory + "/" + media.rawValue + "." + type.fileExtension
    }
}

/// One upload in progress: bytes are hashed and written to a temporary file as they arrive, so that nothing is held
/// in memory and an oversize body is refused at the first byte past the limit.
public final class MediaUpload {
    public enum Failure: Error {
        case tooLarge
        /// The bytes are not an image of a type the contract accepts, or not of the declared type.
        case unsupportedType
    }

    private let temporary: String
    private let descriptor: Int32
    private var hasher = SHA256()
    private var head: [UInt8] = []
    private var size = 0
    private var finished = false
    private let store: MediaStore

    init(directory: String, store: MediaStore) throws {
        temporary = directory + "/.upload-" + UUID().uuidString.lowercased()
        descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw POSIXError.current("open \(temporary)") }
        self.store = store
    }

    deinit {
        if !finished {
            close(descriptor)
            unlink(temporary)
        }
    }

    /// Appends bytes; throws ``Failure/tooLarge`` past ``MediaStore/maximumSize``.
    public func append(_ bytes: UnsafeRawBufferPointer) throws {
        size += bytes.count
        guard size <= MediaStore.maximumSize else { throw Failure.tooLarge }
        if head.count < 12 { head.append(contentsOf: bytes.prefix(12 - head.count)) }
        hasher.update(bufferPointer: bytes)
        try AtomicFile.writeAll(Array(bytes), to: descriptor)
    }

    /// Checks the bytes against `declared`, then stores them under their id (once, however often they are
    /// uploaded). The syncs run off the caller's thread: it may be an event loop that other connections share.
    public func finish(declared: MediaType) async throws -> MediaID {
        guard MediaType.sniff(head) == declared else { throw Failure.unsupportedType }
        let digest = Array(hasher.finalize())
        let high = digest[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
        let low = digest[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
        let id = MediaID(bits: high, low)
        let (descriptor, temporary, destination) = (descriptor, temporary, store.path(id, declared))
        try await BlockingWork.run {
            guard fsync(descriptor) == 0 else { throw POSIXError.current("fsync \(temporary)") }
            try AtomicFile.commit(temporary, as: destination)
        }
        close(descriptor)
        finished = true
        store.didStore(id, declared)
        return id
    }
}
