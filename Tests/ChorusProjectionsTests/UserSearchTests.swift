import ChorusDomain
import ChorusLog
import ChorusProjections
import Testing

@Suite("User search")
struct UserSearchTests {
    @Test(
        "Korean initials, case folding, NFC and majors all find users; exact and prefix matches come first; never the caller"
    )
    func search() async throws {
        try await withProjections { app in
            let minsu = try await app.register("김민수")
            let minji = try await app.register("김민지")
            let kim = try await app.register("Kim Lee")
            let chloe = try await app.register("Chloé Dubois")
            let caller = try await app.register("Searcher")
            _ = try await app.chorus.execute(.editProfile(user: kim, major: "컴퓨터공학"))

            func names(_ query: String, page: PageRequest = PageRequest()) throws -> [String] {
                try app.read { try $0.searchUsers(query, caller: caller, page: page).items.map(\.name) }
            }
            #expect(try names("ㄱㅁㅅ") == ["김민수"])
            #expect(try names("ㄱㅁ") == ["김민수", "김민지"])
            #expect(try names("민") == ["김민수", "김민지"])
            #expect(try names("KIM") == ["Kim Lee"])
            #expect(try names("컴퓨터") == ["Kim Lee"], "majors are searched")
            // "Chloé" typed with a combining accent is the same name after NFC.
            #expect(try names("chloe\u{301}") == ["Chloé Dubois"])
            #expect(try names("searcher") == [], "never the caller")
            #expect(try names("no one") == [])

            // Exact before prefix before elsewhere.
            let kimi = try await app.register("Kimi")
            let akim = try await app.register("Akim")
            let exact = try await app.register("kim")
            _ = (kimi, akim, exact, chloe, minsu, minji)
            #expect(try names("kim") == ["kim", "Kim Lee", "Kimi", "Akim"])

            // Pages continue past the last hit.
            let first = try app.read { try $0.searchUsers("kim", caller: caller, page: PageRequest(limit: 2)) }
            #expect(first.items.map(\.name) == ["kim", "Kim Lee"])
            let cursor = try #require(first.nextCursor)
            #expect(
                try names("kim", page: PageRequest(limit: 2, cursor: PageCursor(cursor.description))) == [
                    "Kimi", "Akim",
                ])

            // An edit moves the user in search at once.
            _ = try await app.chorus.execute(.editProfile(user: exact, name: "Someone Else"))
            #expect(try names("someone") == ["Someone Else"])
            // Its handle, made from the first name, still says kim: found first, as an exact match.
            #expect(try names("kim") == ["Someone Else", "Kim Lee", "Kimi", "Akim"])
        }
    }

    @Test(
        "an empty query lists every user, most followed first, then by id: never the caller nor a blocked user; pages go on; a follow moves a user at once; a deleted account leaves"
    )
    func listing() async throws {
        try await withProjections { app in
            let caller = try await app.register("Caller")
            let ana = try await app.register("Ana")
            let bo = try await app.register("Bo")
            let cy = try await app.register("Cy")
            let dee = try await app.register("Dee")
            for follower in [ana, cy, dee, caller] {
                _ = try await app.chorus.execute(.follow(follower: follower, followee: bo))
            }
            for follower in [bo, caller, ana] {
                _ = try await app.chorus.execute(.follow(follower: follower, followee: dee))
            }
            // A follow that was there already changes nothing.
            _ = try await app.chorus.execute(.follow(follower: bo, followee: dee))

            func names(_ query: String = "", page: PageRequest = PageRequest()) throws -> [String] {
                try app.read { try $0.searchUsers(query, caller: caller, page: page).items.map(\.name) }
            }
            // Ana and Cy have no followers: by id.
            let ties = [(ana, "Ana"), (cy, "Cy")].sorted { $0.0.rawValue < $1.0.rawValue }.map(\.1)
            #expect(try names() == ["Bo", "Dee"] + ties)
            #expect(try names("   ") == ["Bo", "Dee"] + ties, "blank is empty")

            let first = try app.read { try $0.searchUsers("", caller: caller, page: PageRequest(limit: 3)) }
            #expect(first.items.map(\.name) == ["Bo", "Dee", ties[0]])
            let cursor = try #require(first.nextCursor)
            #expect(try names(page: PageRequest(limit: 3, cursor: PageCursor(cursor.description))) == [ties[1]])

            for follower in [ana, cy] { _ = try await app.chorus.execute(.unfollow(follower: follower, followee: bo)) }
            for follower in [caller, ana, bo, dee] {
                _ = try await app.chorus.execute(.follow(follower: follower, followee: cy))
            }
            #expect(try names() == ["Cy", "Dee", "Bo", "Ana"])

            _ = try await app.chorus.execute(.block(blocker: caller, blocked: bo))
            #expect(try names() == ["Cy", "Dee", "Ana"], "a blocked user is not listed")
            _ = try await app.chorus.execute(.deleteAccount(user: cy, password: "secret1"))
            #expect(try names() == ["Dee", "Ana"], "a deleted account leaves")
        }
    }

    @Test("a cursor from another list is refused")
    func foreignCursor() async throws {
        try await withProjections { app in
            let ana = try await app.register("Ana")
            for index in 0..<3 { _ = try await app.post(ana, "p\(index)") }
            // Rank 1, name "abc", id "id": a search cursor, which no position list accepts.
            let searchCursor = try #require(PageCursor("AWFiYwBpZA"))
            #expect(throws: ProjectionError.self) {
                try app.read { try $0.homeFeed(viewer: nil, page: PageRequest(limit: 1, cursor: searchCursor)) }
            }
            #expect(PageCursor("not base64!") == nil)
        }
    }
}
