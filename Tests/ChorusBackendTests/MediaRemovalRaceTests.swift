import ChorusBackend
import ChorusDomain
import ChorusImaging
import ChorusTestSupport
import Foundation
import Testing

@Suite("Media: an upload again while the same image is being removed")
struct MediaRemovalRaceTests {
    @Test("the upload again either comes first and keeps the image, or is told to retry, then stores it anew")
    func uploadAgainDuringRemoval() async throws {
        try await withTemporaryDirectory { directory in
            let store = try MediaStore(directory: directory, keys: TestDataKeys())
            let owner = UserID(bits: 1, 59)
            let photo = SampleImages.bytes("photo.jpg")
            func upload() async throws -> MediaID {
                let upload = try store.beginUpload(owner: owner)
                try photo.withUnsafeBytes { try upload.append($0) }
                return try await upload.finish(declared: .jpeg).id
            }
            let media = try await upload()
            let info = directory + "/" + owner.rawValue + "/" + media.rawValue + ".info"
            let dayAgo = Date(timeIntervalSinceNow: -86_400)

            // Found two days old, then uploaded again before its removal was decided: it stays.
            try FileManager.default.setAttributes([.modificationDate: dayAgo - 86_400], ofItemAtPath: info)
            #expect(store.stored(before: dayAgo, leavingOut: []).map { $0.media } == [media])
            #expect(try await upload() == media)
            #expect(!store.hide(media, ifStoredBefore: dayAgo), "its day started anew")
            #expect(store.contains(media))

            // Its removal decided first: the upload again is told to retry, and stores it anew once it is gone.
            try FileManager.default.setAttributes([.modificationDate: dayAgo - 86_400], ofItemAtPath: info)
            #expect(store.hide(media, ifStoredBefore: dayAgo))
            await #expect(throws: MediaStore.BeingRemoved.self) { _ = try await upload() }
            store.remove(media)
            #expect(!store.contains(media) && !FileManager.default.fileExists(atPath: info))
            #expect(try await upload() == media)
            #expect(store.contains(media) && FileManager.default.fileExists(atPath: info))
            #expect(try store.contents(of: media, size: .small) != nil)
        }
    }
}
