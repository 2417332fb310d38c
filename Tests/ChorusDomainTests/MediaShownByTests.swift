import ChorusDomain
import ChorusLog
import ChorusTestSupport
import Testing

@Suite("Media: who showed an image, from the log")
struct MediaShownByTests {
    @Test(
        "the first post or profile to show each image names its owner; an erased user owns nothing; the log is read up to the position given"
    )
    func firstShowers() async throws {
        try await withExecutor { chorus, media in
            let (ana, bo, cy) = (
                try await chorus.register("Ana"), try await chorus.register("Bo"), try await chorus.register("Cy")
            )
            let (first, second, avatar) = (
                media.add(uploadedBy: ana), media.add(uploadedBy: ana), media.add(uploadedBy: bo)
            )
            let (erased, late, unshown) = (
                media.add(uploadedBy: cy), media.add(uploadedBy: ana), media.add(uploadedBy: bo)
            )
            _ = try await chorus.execute(
                .createPost(author: ana, media: [PostImage(id: first, alt: nil), PostImage(id: second, alt: nil)]))
            _ = try await chorus.execute(.editProfile(user: ana, profileImage: .set(second)))
            _ = try await chorus.execute(.editProfile(user: bo, profileImage: .set(avatar)))
            _ = try await chorus.execute(.createPost(author: cy, media: [PostImage(id: erased, alt: nil)]))
            _ = try await chorus.execute(.deleteAccount(user: cy, password: "secret-password"))
            let last = chorus.log.head
            _ = try await chorus.execute(.createPost(author: ana, media: [PostImage(id: late, alt: nil)]))

            let shown = try MediaShownBy.firstShowers(
                of: [first, second, avatar, erased, late, unshown], in: chorus.log, through: last,
                keys: TestDataKeys.shared)
            #expect(shown == [first: ana, second: ana, avatar: bo])
            #expect(
                try MediaShownBy.firstShowers(
                    of: [late], in: chorus.log, through: chorus.log.head, keys: TestDataKeys.shared)
                    == [late: ana])
        }
    }
}
