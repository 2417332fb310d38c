import ChorusDomain
import ChorusImaging
import ChorusProcesses
import ChorusStorage
import Crypto
import Foundation

/// One upload in progress: bytes are hashed and written to a temporary file as they arrive, so that nothing is held
/// in memory and an oversize body is refused at the first byte past the limit. The file is the pipeline's input, and
/// is removed as soon as the pipeline has run.
public final class MediaUpload {
    /// More than ``MediaStore/maximumSize`` bytes.
    public struct TooLarge: Error {}

    private let temporary: String
    private let descriptor: Int32
    private let owner: UserID
    private var hasher = SHA256()
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

    /// Appends bytes; throws ``TooLarge`` past ``MediaStore/maximumSize``.
    public func append(_ bytes: UnsafeRawBufferPointer) throws {
        size += bytes.count
        guard size <= MediaStore.maximumSize else { throw TooLarge() }
        hasher.update(bufferPointer: bytes)
        try AtomicFile.writeAll(Array(bytes), to: descriptor)
    }

    /// Runs the pipeline on the upload as `declared` (unless the same upload is stored already), then seals and stores
    /// what it made. Throws ``ChorusImaging/ImageRefusal`` for an image refused, ``ImageWorkerPool/Busy`` when too many
    /// uploads are being processed, ``MediaStore/BeingRemoved`` while the same upload is being removed. The temporary
    /// file is removed either way.
    public func finish(declared: UploadFormat) async throws -> (id: MediaID, info: MediaInfo?) {
        let digest = Array(hasher.finalize())
        let high = digest[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
        let low = digest[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
        let id = MediaID(bits: high, low)
        defer {
            close(descriptor)
            unlink(temporary)
            finished = true
        }
        // Uploaded again: its day to be attached starts anew.
        if try store.renew(id, owner: owner) { return (id, store.info(of: id)) }
        let image = try await store.workers.process(file: temporary, claimed: declared)
        let (store, owner) = (store, owner)
        let info = try await BlockingWork.run { try store.store(image, as: id, owner: owner) }
        return (id, info)
    }
}
