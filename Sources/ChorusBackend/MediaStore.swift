import ChorusCluster
import ChorusDomain
import ChorusImaging
import ChorusLog
import ChorusProcesses
import ChorusStorage
import Crypto
import Foundation
import Synchronization

/// Uploaded images, as the pipeline (``ImageWorkerPool``) wrote them: `media/<user>/<id>.large.<ext>`,
/// `<id>.small.<ext>` and `<id>.info`, each sealed under the uploader's data key (AES-GCM, as ``PersonalDataKeys``
/// says). The upload itself is never kept. An id is made from the SHA-256 of the uploader and the uploaded bytes, so
/// the same upload twice by one user is one image, processed once, and a stored file never changes. Erasing a user
/// removes their folder; their key is destroyed besides. Ids come from clients only after
/// ``ChorusIdentifier/init(_:)`` has checked their form, so no path can leave the folder.
///
/// In a cluster, every image's files are also kept in the cluster's PostgreSQL (``ChorusCluster/ClusterMediaFiles``),
/// sealed as on disk: a node that does not hold an image fetches it from there once, and keeps it.
///
/// Files an older Chorus stored as uploaded (`<id>.<ext>`, sealed in the uploader's folder or plain in `media/`)
/// are served as they are, in both sizes, until ``upgradeStoredUploads(owners:)`` has run them through the pipeline.
public final class MediaStore: MediaCatalog {
    public static let maximumSize = 20 << 20

    /// Where a stored image is: its uploader (nil for a plain file of an older Chorus) and its files' types.
    struct Stored: Sendable {
        let owner: UserID?
        /// The two variants' types; one file of that type for a file of an older Chorus.
        var large: ImageFormat?
        var small: ImageFormat?
        var legacy: ImageFormat?

        func type(_ size: MediaSize) -> ImageFormat? { legacy ?? (size == .large ? large : small) }

        /// Takes in the file called `name` (`<id>.<size>.<ext>`, or `<id>.<ext>` of an older Chorus); false for a
        /// name of neither form.
        mutating func add(file name: String) -> Bool {
            let parts = name.split(separator: ".").map(String.init)
            guard let type = ImageFormat.allCases.first(where: { $0.fileExtension == parts.last }) else { return false }
            switch parts.count {
            case 2: legacy = type
            case 3 where parts[1] == MediaSize.large.rawValue: large = type
            case 3 where parts[1] == MediaSize.small.rawValue: small = type
            default: return false
            }
            return true
        }
    }

    public let directory: String
    let keys: any PersonalDataKeys
    let workers: ImageWorkerPool
    /// Where the cluster keeps every node's images; nil for a single node.
    private let shared: ClusterMediaFiles?
    /// Every stored id, read from the folders at start.
    private let index: Mutex<[MediaID: Stored]>
    /// The info of images uploaded or read since start: feeds render it for every image they show.
    private let infos = Mutex<[MediaKey: MediaInfo]>([:])
    /// Images being removed (``hide(_:)``): stored still, but no longer for a post or a profile to name.
    private let hidden = Mutex<Set<MediaID>>([])

    public init(
        directory: String, keys: any PersonalDataKeys, workers: ImageWorkerPool = ImageWorkerPool(),
        shared: ClusterMediaFiles? = nil
    ) throws {
        self.directory = directory
        self.keys = keys
        self.workers = workers
        self.shared = shared
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        index = Mutex(try Self.scan(directory))
    }

    private static func scan(_ directory: String) throws -> [MediaID: Stored] {
        let files = FileManager.default
        var found: [MediaID: Stored] = [:]
        /// The `.info` is written last: an image without one is not stored yet.
        var withInfo: Set<MediaID> = []
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
                guard let id = MediaID(String(name.prefix { $0 != "." })) else { continue }
                if name.hasSuffix(".info") {
                    withInfo.insert(id)
                    continue
                }
                var stored = found[id] ?? Stored(owner: owner)
                guard stored.add(file: name) else { continue }
                found[id] = stored
            }
        }
        try scan(directory, owner: nil)
        var stored: [MediaID: Stored] = [:]
        for (id, var entry) in found {
            if withInfo.contains(id), entry.large != nil, entry.small != nil {
                if let legacy = entry.legacy, let owner = entry.owner {
                    // Upgraded, and stopped before the upload it came from was removed.
                    try? files.removeItem(
                        atPath: "\(directory)/\(owner.rawValue)/\(id.rawValue).\(legacy.fileExtension)")
                }
                entry.legacy = nil
            } else if entry.legacy == nil {
                continue
            }
            stored[id] = entry
        }
        return stored
    }

    /// Whether `media` is stored, and not being removed (``hide(_:)``).
    public func contains(_ media: MediaID) -> Bool {
        stored(media) != nil && !hidden.withLock { $0.contains(media) }
    }

    public func contains(_ media: MediaID, uploadedBy user: UserID) -> Bool {
        stored(media)?.owner == user && !hidden.withLock { $0.contains(media) }
    }

    /// Where `media` is: in this node's folders, or fetched into them from the cluster's (once).
    private func stored(_ media: MediaID) -> Stored? {
        if let known = index.withLock({ $0[media] }) { return known }
        guard let shared, let found = try? shared.files(of: media.rawValue), let owner = UserID(found.owner) else {
            return nil
        }
        var stored = Stored(owner: owner)
        do {
            try FileManager.default.createDirectory(
                atPath: directory + "/" + owner.rawValue, withIntermediateDirectories: true)
            // The info last, as an upload writes it.
            for file in found.files.sorted(by: { !$0.name.hasSuffix(".info") && $1.name.hasSuffix(".info") }) {
                guard file.name.hasPrefix(media.rawValue + "."), !file.name.contains("/") else { continue }
                if !file.name.hasSuffix(".info") { guard stored.add(file: file.name) else { continue } }
                try AtomicFile.write(
                    file.bytes, to: directory + "/" + owner.rawValue + "/" + file.name, permissions: 0o600)
            }
        } catch {
            return nil
        }
        guard stored.large != nil, stored.small != nil else { return nil }
        index.withLock { $0[media] = stored }
        return stored
    }

    /// Makes ``contains(_:)`` deny `media` while its removal is decided, and an upload of it answer ``BeingRemoved``.
    public func hide(_ media: MediaID) { _ = hidden.withLock { $0.insert(media) } }

    /// ``hide(_:)``, unless `media` was stored (or uploaded again) at `date` or later: then it may not be removed,
    /// and the answer is false. Under the lock an upload takes to start an image's day anew (``MediaUpload``), so that
    /// an upload either comes first and keeps the image, or comes after and is told to retry.
    public func hide(_ media: MediaID, ifStoredBefore date: Date) -> Bool {
        hidden.withLock { hidden in
            guard let owner = index.withLock({ $0[media]?.owner }), isStored(media, owner: owner, before: date) else {
                return false
            }
            hidden.insert(media)
            return true
        }
    }

    /// The image is being removed: an upload of the same bytes is answered with this, to be sent again once the
    /// removal is done.
    public struct BeingRemoved: Error {}

    /// Starts `media`'s day to be attached anew, now, for the same upload again; throws ``BeingRemoved`` while its
    /// removal is decided. False when it is not stored.
    func renew(_ media: MediaID, owner: UserID) throws -> Bool {
        // Fetched from the cluster first, if need be, outside the lock.
        guard stored(media) != nil else { return false }
        return try hidden.withLock { hidden in
            guard !hidden.contains(media) else { throw BeingRemoved() }
            // Removed meanwhile: stored anew.
            guard index.withLock({ $0[media] }) != nil else { return false }
            try? FileManager.default.setAttributes(
                [.modificationDate: Date()], ofItemAtPath: infoPath(media, owner: owner))
            return true
        }
    }

    /// Takes back ``hide(_:)``.
    public func show(_ media: MediaID) { _ = hidden.withLock { $0.remove(media) } }

    /// The type and bytes of `media` in `size`, opened with its uploader's key; nil if there is no such media, or its
    /// uploader was erased.
    public func contents(of media: MediaID, size: MediaSize = .large) throws -> (type: ImageFormat, bytes: [UInt8])? {
        guard let stored = stored(media), let type = stored.type(size),
            let bytes = try opened(path(media, stored, size: size, type: type), of: media, owner: stored.owner)
        else { return nil }
        return (type, bytes)
    }

    /// The type `media` is served in at `size`; nil if there is no such media.
    public func type(of media: MediaID, size: MediaSize = .large) -> ImageFormat? { stored(media)?.type(size) }

    /// The sizes and BlurHash of `media`; nil for an image of an older Chorus, or none.
    public func info(of media: MediaID) -> MediaInfo? {
        if let known = infos.withLock({ $0[MediaKey(media)] }) { return known }
        guard let stored = stored(media), stored.legacy == nil, let owner = stored.owner,
            let bytes = try? opened(infoPath(media, owner: owner), of: media, owner: owner),
            let info = try? JSONDecoder().decode(MediaInfo.self, from: Data(bytes))
        else { return nil }
        infos.withLock { $0[MediaKey(media)] = info }
        return info
    }

    /// ``info(of:)`` for an id read in place (a post's image, as a feed writes it): no string made once the info is
    /// known.
    public func info(ofUTF8 id: UnsafeRawBufferPointer) -> MediaInfo? {
        if let key = MediaKey(id), let known = infos.withLock({ $0[key] }) { return known }
        return MediaID(String(decoding: id, as: UTF8.self)).flatMap(info(of:))
    }

    /// Runs every image an older Chorus stored as it was uploaded through the pipeline, and replaces its file with the
    /// variants, sealed under its owner's key. A plain file of the oldest Chorus has no owner on disk: `owners` is
    /// asked who showed each (``ChorusDomain/MediaShownBy``) while those files are hidden (``hide(_:)``), so that no
    /// post names one meanwhile; a file that no living user showed is removed. What the pipeline refuses is kept, and
    /// served as before: sealed under its owner's key, a plain one included.
    public func upgradeStoredUploads(
        owners: (Set<MediaID>) async throws -> [MediaID: UserID]
    ) async throws -> StoredUploadsUpgrade {
        var upgrade = StoredUploadsUpgrade()
        let plain = Set(index.withLock { $0.filter { $0.value.owner == nil }.keys })
        for media in plain { hide(media) }
        defer { for media in plain { show(media) } }
        let found = plain.isEmpty ? [:] : try await owners(plain)
        let legacy = index.withLock { $0.filter { $0.value.legacy != nil } }
        for (media, entry) in legacy {
            guard let owner = entry.owner ?? found[media] else {
                remove(media)
                upgrade.removed += 1
                continue
            }
            switch try await runThroughPipeline(media, entry, owner: owner) {
            case true?: upgrade.upgraded += 1
            case false?: upgrade.refused += 1
            case nil: break
            }
        }
        return upgrade
    }

    /// Runs the file of an older Chorus through the pipeline and stores what it makes under `owner`; true once
    /// upgraded, false when the pipeline refused the file (then a plain one is sealed as it is), nil when the file was
    /// gone or its owner erased.
    private func runThroughPipeline(_ media: MediaID, _ entry: Stored, owner: UserID) async throws -> Bool? {
        guard let legacy = entry.legacy, let claimed = UploadFormat(rawValue: legacy.rawValue) else { return nil }
        let file = path(media, entry, size: .large, type: legacy)
        guard let bytes = try opened(file, of: media, owner: entry.owner) else { return nil }
        let temporary = directory + "/.upload-" + UUID().uuidString.lowercased()
        try AtomicFile.write(bytes, to: temporary, permissions: 0o600)
        defer { unlink(temporary) }
        do {
            let image = try await workers.process(file: temporary, claimed: claimed)
            try await BlockingWork.run {
                _ = try self.store(image, as: media, owner: owner)
                try FileManager.default.removeItem(atPath: file)
            }
            return true
        } catch is ImageRefusal {
            guard entry.owner == nil else { return false }
            let kept = Stored(owner: owner, legacy: legacy)
            try FileManager.default.createDirectory(
                atPath: directory + "/" + owner.rawValue, withIntermediateDirectories: true)
            let sealedBytes = try sealed(bytes, as: media, key: try keys.makeKey(for: owner))
            try AtomicFile.write(sealedBytes, to: path(media, kept, size: .large, type: legacy), permissions: 0o600)
            index.withLock { $0[media] = kept }
            try FileManager.default.removeItem(atPath: file)
            return false
        }
    }

    /// The images this Chorus's pipeline stored before `date` (when their info was written, or last uploaded again),
    /// with their uploaders, leaving out `known`: what may be removed if nothing shows it (``UnattachedMediaService``).
    public func stored(before date: Date, leavingOut known: Set<MediaID>) -> [(media: MediaID, owner: UserID)] {
        let candidates = index.withLock { index in
            index.compactMap { media, stored -> (MediaID, UserID)? in
                guard stored.legacy == nil, let owner = stored.owner, !known.contains(media) else { return nil }
                return (media, owner)
            }
        }
        return candidates.filter { media, owner in isStored(media, owner: owner, before: date) }
    }

    /// Whether `media`'s info was written (or the upload last made again) before `date`.
    private func isStored(_ media: MediaID, owner: UserID, before date: Date) -> Bool {
        let attributes = try? FileManager.default.attributesOfItem(atPath: infoPath(media, owner: owner))
        guard let written = attributes?[.modificationDate] as? Date else { return false }
        return written < date
    }

    /// Removes `media`, every variant of it.
    public func remove(_ media: MediaID) {
        defer { show(media) }
        guard let stored = index.withLock({ $0.removeValue(forKey: media) }) else { return }
        infos.withLock { $0[MediaKey(media)] = nil }
        for size in MediaSize.allCases {
            if let type = stored.type(size) { unlink(path(media, stored, size: size, type: type)) }
        }
        guard let owner = stored.owner else { return }
        unlink(infoPath(media, owner: owner))
        // Every node that applies the removal asks; the first one removes.
        try? shared?.remove(media.rawValue)
    }

    /// Starts an upload by `owner` into a temporary file.
    public func beginUpload(owner: UserID) throws -> MediaUpload {
        try MediaUpload(directory: directory, owner: owner, store: self)
    }

    /// Removes every image `owner` uploaded, every variant (their account was deleted); returns how many.
    @discardableResult
    public func removeAll(of owner: UserID) throws -> Int {
        let theirs = index.withLock { index in
            let theirs = index.filter { $0.value.owner == owner }.map(\.key)
            for media in theirs { index[media] = nil }
            return theirs
        }
        infos.withLock { infos in
            for media in theirs { infos[MediaKey(media)] = nil }
        }
        let folder = directory + "/" + owner.rawValue
        if FileManager.default.fileExists(atPath: folder) { try FileManager.default.removeItem(atPath: folder) }
        try shared?.removeAll(of: owner.rawValue)
        return theirs.count
    }

    /// Seals what the pipeline made of an upload and stores it under `media`.
    func store(_ image: ProcessedImage, as media: MediaID, owner: UserID) throws -> MediaInfo {
        let key = try keys.makeKey(for: owner)
        let info = MediaInfo(image)
        let stored = Stored(owner: owner, large: image.large.format, small: image.small.format)
        try FileManager.default.createDirectory(
            atPath: directory + "/" + owner.rawValue, withIntermediateDirectories: true)
        // The info last, once the cluster has every file: a crash or a refusal before it leaves variants that
        // ``scan(_:)`` does not count as stored, and the same upload again writes them anew.
        var files: [(name: String, bytes: [UInt8])] = []
        var written: [String] = []
        for (size, variant) in [(MediaSize.large, image.large), (.small, image.small)] {
            let path = path(media, stored, size: size, type: variant.format)
            let bytes = try sealed(variant.bytes, as: media, key: key)
            try AtomicFile.write(bytes, to: path, permissions: 0o600)
            (files, written) = (files + [(name(of: path), bytes)], written + [path])
        }
        let infoPath = infoPath(media, owner: owner)
        let infoBytes = try sealed(Array(try JSONEncoder().encode(info)), as: media, key: key)
        do {
            try shared?.put(media.rawValue, owner: owner.rawValue, files: files + [(name(of: infoPath), infoBytes)])
        } catch {
            // Not in the cluster, so on no node: nothing is left here either.
            for path in written { unlink(path) }
            throw error
        }
        try AtomicFile.write(infoBytes, to: infoPath, permissions: 0o600)
        infos.withLock { $0[MediaKey(media)] = info }
        index.withLock { $0[media] = stored }
        return info
    }

    /// `bytes` sealed as a file of `media`.
    private func sealed(_ bytes: [UInt8], as media: MediaID, key: SymmetricKey) throws -> [UInt8] {
        let box = try AES.GCM.seal(bytes, using: key, authenticating: Array(media.rawValue.utf8))
        guard let sealed = box.combined else { throw POSIXError(.EIO) }
        return Array(sealed)
    }

    /// The last part of `path`: a file's name in its folder, as the cluster keeps it.
    private func name(of path: String) -> String { String(path.split(separator: "/").last ?? "") }

    /// The bytes of the file at `path`, opened with `owner`'s key (plain for a file of an older Chorus with no owner).
    private func opened(_ path: String, of media: MediaID, owner: UserID?) throws -> [UInt8]? {
        guard let bytes = FileManager.default.contents(atPath: path) else { return nil }
        guard let owner else { return Array(bytes) }
        guard let key = try keys.key(of: owner) else { return nil }
        let box = try AES.GCM.SealedBox(combined: bytes)
        return Array(try AES.GCM.open(box, using: key, authenticating: Array(media.rawValue.utf8)))
    }

    /// The file of `media` in `size`, of `type` (``Stored/type(_:)``): `<id>.<size>.<ext>`, or `<id>.<ext>` for a
    /// file of an older Chorus.
    private func path(_ media: MediaID, _ stored: Stored, size: MediaSize, type: ImageFormat) -> String {
        let folder = directory + (stored.owner.map { "/" + $0.rawValue } ?? "")
        let name = stored.legacy == nil ? media.rawValue + "." + size.rawValue : media.rawValue
        return folder + "/" + name + "." + type.fileExtension
    }

    func infoPath(_ media: MediaID, owner: UserID) -> String {
        directory + "/" + owner.rawValue + "/" + media.rawValue + ".info"
    }
}

/// What ``MediaStore/upgradeStoredUploads(owners:)`` did.
public struct StoredUploadsUpgrade: Sendable, Equatable {
    /// Files run through the pipeline, replaced by its variants.
    public var upgraded = 0
    /// Files the pipeline refused, kept and served as they were.
    public var refused = 0
    /// Plain files that no living user showed, removed.
    public var removed = 0

    public init(upgraded: Int = 0, refused: Int = 0, removed: Int = 0) {
        (self.upgraded, self.refused, self.removed) = (upgraded, refused, removed)
    }
}
