import ChorusDomain
import ChorusLog
import ChorusProcesses
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

/// Uploaded images, each sealed under its uploader's data key (AES-GCM, as ``PersonalDataKeys`` says) in a folder of
/// the uploader's own: `media/<user>/<id>.<type>`. An id is made from the SHA-256 of the uploader and the bytes, so the
/// same bytes uploaded twice by one user are one file, and a stored file never changes. Erasing a user removes their
/// folder; their key is destroyed besides. Files of an older Chorus lie in `media/` itself, in plain, and are served
/// as they are. Ids come from clients only after ``ChorusIdentifier/init(_:)`` has checked their form, so no path can
/// leave the folder.
public final class MediaStore: MediaCatalog {
    public static let maximumSize = 10 << 20

    /// Where a stored image is: its type, and its uploader (nil for a plain file of an older Chorus).
    struct Stored: Sendable {
        let type: MediaType
        let owner: UserID?
    }

    public let directory: String
    let keys: any PersonalDataKeys
    /// Every stored id, read from the folders at start.
    private let index: Mutex<[MediaID: Stored]>

    public init(directory: String, keys: any PersonalDataKeys) throws {
        self.directory = directory
        self.keys = keys
        let files = FileManager.default
        try files.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var found: [MediaID: Stored] = [:]
        func scan(_ folder: String, owner: UserID?) throws {
            for name in try files.contentsOfDirectory(atPath: folder) {
                if name.hasPrefix(".upload-") {
                    // Left by a crash mid-upload.
                    try? files.removeItem(atPath: folder + "/" + name)
                    continue
                }
                if owner == nil, let user = UserID(name) {
                    try scan(folder + "/" + name, owner: user)
                    continue
                }
                let parts = name.split(separator: ".")
                guard parts.count == 2, let id = MediaID(String(parts[0])),
                    let type = MediaType.allCases.first(where: { $0.fileExtension == parts[1] })
                else { continue }
                found[id] = Stored(type: type, owner: owner)
            }
        }
        try scan(directory, owner: nil)
        index = Mutex(found)
    }

    public func contains(_ media: MediaID) -> Bool { index.withLock { $0[media] != nil } }

    /// The type and bytes of `media`, opened with its uploader's key; nil if there is no such media, or its uploader
    /// was erased.
    public func contents(of media: MediaID) throws -> (type: MediaType, bytes: [UInt8])? {
        guard let stored = index.withLock({ $0[media] }),
            let bytes = FileManager.default.contents(atPath: path(media, stored))
        else { return nil }
        guard let owner = stored.owner else { return (stored.type, Array(bytes)) }
        guard let key = try keys.key(of: owner) else { return nil }
        let box = try AES.GCM.SealedBox(combined: bytes)
        return (stored.type, Array(try AES.GCM.open(box, using: key, authenticating: Array(media.rawValue.utf8))))
    }

    /// Starts an upload by `owner` into a temporary file.
    public func beginUpload(owner: UserID) throws -> MediaUpload {
        try MediaUpload(directory: directory, owner: owner, store: self)
    }

    /// Removes every image `owner` uploaded (their account was deleted); returns how many.
    @discardableResult
    public func removeAll(of owner: UserID) throws -> Int {
        let removed = index.withLock { index in
            let theirs = index.filter { $0.value.owner == owner }.map(\.key)
            for media in theirs { index[media] = nil }
            return theirs.count
        }
        let folder = directory + "/" + owner.rawValue
        if FileManager.default.fileExists(atPath: folder) { try FileManager.default.removeItem(atPath: folder) }
        return removed
    }

    /// Records a file that ``MediaUpload/finish(declared:)`` has put in place.
    fileprivate func didStore(_ media: MediaID, _ stored: Stored) {
        index.withLock { $0[media] = stored }
    }

    fileprivate func path(_ media: MediaID, _ stored: Stored) -> String {
        directory + (stored.owner.map { "/" + $0.rawValue } ?? "") + "/" + media.rawValue + "."
            + stored.type.fileExtension
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
    private let owner: UserID
    private var hasher = SHA256()
    private var head: [UInt8] = []
    private var size = 0
    private var finished = false
    private let store: MediaStore

    init(directory: String, owner: UserID, store: MediaStore) throws {
        temporary = directory + "/.upload-" + UUID().uuidString.lowercased()
        descriptor = open(temporary, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw POSIXError.current("open \(temporary)") }
        self.owner = owner
        self.store = store
        hasher.update(data: Array(owner.rawValue.utf8) + [0])
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

    /// Checks the bytes against `declared`, then seals them under the owner's key and stores them under their id
    /// (once, however often they are uploaded). The plain bytes' temporary file is removed either way. The work runs
    /// off the caller's thread: it may be an event loop that other connections share.
    public func finish(declared: MediaType) async throws -> MediaID {
        guard MediaType.sniff(head) == declared else { throw Failure.unsupportedType }
        let digest = Array(hasher.finalize())
        let high = digest[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
        let low = digest[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
        let id = MediaID(bits: high, low)
        let stored = MediaStore.Stored(type: declared, owner: owner)
        let (descriptor, temporary, destination, keys, owner) = (
            descriptor, temporary, store.path(id, stored), store.keys, owner
        )
        defer {
            close(descriptor)
            unlink(temporary)
            finished = true
        }
        try await BlockingWork.run {
            guard let plain = FileManager.default.contents(atPath: temporary) else {
                throw POSIXError.current("read \(temporary)")
            }
            let box = try AES.GCM.seal(
                plain, using: try keys.makeKey(for: owner), authenticating: Array(id.rawValue.utf8))
            guard let sealed = box.combined else { throw POSIXError(.EIO) }
            try FileManager.default.createDirectory(
                atPath: (destination as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try AtomicFile.write(Array(sealed), to: destination, permissions: 0o600)
        }
        store.didStore(id, stored)
        return id
    }
}
