import ChorusBackend
import ChorusDomain
import ChorusImaging
import ChorusTestSupport
import Crypto
import Foundation
import Testing

@Suite("Media: uploads an older Chorus stored as they came")
struct MediaUpgradeTests {
    @Test("are served as stored until upgraded, then only as the pipeline wrote them; what it refuses is kept")
    func upgrade() async throws {
        try await withTemporaryDirectory { directory in
            let keys = TestDataKeys()
            let owner = UserID(bits: 1, 57)
            let photo = MediaID(bits: 2, 57)
            let junk = MediaID(bits: 3, 57)
            let original = SampleImages.bytes("photo.jpg")
            let junkBytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3]
            // As an older Chorus stored them: the upload sealed under its owner's key, named `<id>.<ext>`.
            let folder = directory + "/" + owner.rawValue
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            for (media, bytes, name) in [(photo, original, "jpg"), (junk, junkBytes, "png")] {
                let sealed = try AES.GCM.seal(
                    bytes, using: try keys.makeKey(for: owner), authenticating: Array(media.rawValue.utf8))
                try Data(sealed.combined!).write(to: URL(fileURLWithPath: "\(folder)/\(media.rawValue).\(name)"))
            }

            let store = try MediaStore(directory: directory, keys: keys)
            #expect(try store.contents(of: photo)?.bytes == original && store.info(of: photo) == nil)
            let noPlainFiles: (Set<MediaID>) async throws -> [MediaID: UserID] = { asked in
                Issue.record("asked for the owners of \(asked), though every file has one")
                return [:]
            }
            #expect(try await store.upgradeStoredUploads(owners: noPlainFiles) == .init(upgraded: 1, refused: 1))

            for reopened in [store, try MediaStore(directory: directory, keys: keys)] {
                let info = try #require(reopened.info(of: photo))
                #expect(info.width == 240 && info.height == 320, "turned upright")
                for size in MediaSize.allCases {
                    let served = try #require(try reopened.contents(of: photo, size: size))
                    #expect(served.type == .jpeg && served.bytes != original)
                    let text = String(decoding: served.bytes, as: UTF8.self)
                    #expect(!SampleImages.metadataMarkers.contains { text.contains($0) }, "\(size)")
                }
                #expect(try reopened.contents(of: junk)?.bytes == junkBytes, "refused, so kept as it was")
                #expect(reopened.type(of: junk) == .png && reopened.info(of: junk) == nil, "served as the PNG it was")
            }
            #expect(!FileManager.default.fileExists(atPath: "\(folder)/\(photo.rawValue).jpg"))
            #expect(try await store.upgradeStoredUploads(owners: noPlainFiles) == .init(refused: 1))
        }
    }

    @Test(
        "plain files of the oldest Chorus go to whoever showed them, sealed and run through the pipeline; those no one showed are removed"
    )
    func plainFiles() async throws {
        try await withTemporaryDirectory { directory in
            let keys = TestDataKeys()
            let owner = UserID(bits: 1, 58)
            let (photo, junk, orphan) = (MediaID(bits: 2, 58), MediaID(bits: 3, 58), MediaID(bits: 4, 58))
            let original = SampleImages.bytes("photo.jpg")
            let junkBytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3]
            // As the oldest Chorus stored them: plain, in the folder itself, with no owner.
            for (media, bytes, name) in [(photo, original, "jpg"), (junk, junkBytes, "png"), (orphan, original, "jpg")]
            {
                try Data(bytes).write(to: URL(fileURLWithPath: "\(directory)/\(media.rawValue).\(name)"))
            }

            let store = try MediaStore(directory: directory, keys: keys)
            #expect(try store.contents(of: photo)?.bytes == original, "served as stored until upgraded")
            var hiddenWhileAsked = false
            let upgrade = try await store.upgradeStoredUploads { asked in
                #expect(asked == [photo, junk, orphan])
                hiddenWhileAsked = !asked.contains(where: store.contains)
                return [photo: owner, junk: owner]
            }
            #expect(upgrade == .init(upgraded: 1, refused: 1, removed: 1))
            #expect(hiddenWhileAsked, "no post may name one while its owner is looked for")

            for reopened in [store, try MediaStore(directory: directory, keys: keys)] {
                #expect(reopened.contains(photo) && reopened.contains(junk) && !reopened.contains(orphan))
                let info = try #require(reopened.info(of: photo))
                #expect(info.width == 240 && info.height == 320, "turned upright")
                for size in MediaSize.allCases {
                    let served = try #require(try reopened.contents(of: photo, size: size))
                    let text = String(decoding: served.bytes, as: UTF8.self)
                    #expect(!SampleImages.metadataMarkers.contains { text.contains($0) }, "\(size)")
                }
                #expect(try reopened.contents(of: junk)?.bytes == junkBytes, "refused, so served as it was")
                #expect(try reopened.contents(of: orphan) == nil)
            }
            let leftInPlain = try FileManager.default.contentsOfDirectory(atPath: directory).filter {
                !$0.hasPrefix(owner.rawValue)
            }
            #expect(leftInPlain.isEmpty, "every file is in its owner's folder, sealed: \(leftInPlain)")
            let kept = try #require(
                FileManager.default.contents(atPath: "\(directory)/\(owner.rawValue)/\(junk.rawValue).png"))
            #expect(Array(kept) != junkBytes, "the refused file is sealed too")

            // Their owner's erasure now takes them, as it takes every upload of theirs.
            #expect(try store.removeAll(of: owner) == 2)
            #expect(try store.contents(of: photo) == nil && store.contents(of: junk) == nil)
        }
    }
}
