import ChorusDomain
import ChorusLog
import ChorusTestSupport
import Testing

@Suite("Commands and decisions")
struct CommandExecutorTests {
    @Test("registration validates, normalises to NFC and trims, and claims the e-mail without regard to case")
    func registration() async throws {
        try await withExecutor { chorus, _ in
            #expect(
                await domainErrorCode {
                    _ = try await chorus.execute(.registerUser(email: "nope", password: "secret1", name: "A"))
                } == .invalidEmail)
            #expect(
                await domainErrorCode {
                    _ = try await chorus.execute(.registerUser(email: "a@b", password: "secret1", name: "A"))
                } == .invalidEmail)
            #expect(
                await domainErrorCode {
                    _ = try await chorus.execute(.registerUser(email: "a@example.com", password: "12345", name: "A"))
                } == .weakPassword)
            #expect(
                await domainErrorCode {
                    _ = try await chorus.execute(
                        .registerUser(email: "a@example.com", password: String(repeating: "x", count: 73), name: "A"))
                } == .weakPassword)
            #expect(
                await domainErrorCode {
                    _ = try await chorus.execute(
                        .registerUser(email: "a@example.com", password: "secret1", name: "   "))
                } == .invalidField)
            #expect(
                await domainErrorCode {
                    _ = try await chorus.execute(
                        .registerUser(
                            email: "a@example.com", password: "secret1", name: String(repeating: "가", count: 51)))
                } == .invalidField)
            #expect(
                await domainErrorCode {
                    _ = try await chorus.execute(
                        .registerUser(email: "a@example.com", password: "secret1", name: "A\u{0}B"))
                } == .invalidField)
            #expect(chorus.log.head == .start, "refused commands append nothing")

            // "김민수" written with decomposed jamo becomes the composed syllables.
            let decomposed = "\u{1100}\u{1175}\u{11B7}\u{1106}\u{1175}\u{11AB}\u{1109}\u{116E}"
            let result = try await chorus.execute(
                .registerUser(
                    email: "  Min@Example.com ", password: "secret1", name: " \(decomposed) ", major: " 컴퓨터공학 "))
            #expect(result.appended)
            guard case .userRegistered(let event) = try chorus.events().first else {
                Issue.record("expected UserRegistered")
                return
            }
            #expect(event.name == "김민수")
            #expect(event.email == "Min@Example.com")
            #expect(event.major == "컴퓨터공학")
            #expect(event.passwordHash.hasPrefix("$2"), "bcrypt, not the password")
            #expect(
                await domainErrorCode {
                    _ = try await chorus.execute(
                        .registerUser(email: "MIN@example.COM", password: "secret2", name: "Other"))
                } == .emailTaken)
            #expect(chorus.log.head == 2, "UserRegistered and the first SessionStarted")

            #expect(try chorus.authenticate(email: "min@example.com", password: "secret1").rawValue == result.createdID)
            #expect(throws: DomainError(.invalidCredentials, "the e-mail or the password is wrong")) {
                try chorus.authenticate(email: "min@example.com", password: "wrong-password")
            }
            #expect(throws: DomainError.self) {
                try chorus.authenticate(email: "nobody@example.com", password: "secret1")
            }
        }
    }

    @Test("an e-mail's key is the lowercase hex SHA-256 of the lowercased e-mail, as every stored log has it")
    func emailKeyIsStable() {
        // Computed independently: sha256(b"chorus e-mail\x00" + b"ana@example.com").hexdigest(), and likewise of the
        // UTF-8 of "élodie.ärger@exemple.fr" and of nothing (an ASCII e-mail is lowercased by byte, any other by
        // Unicode).
        #expect(
            Validate.emailKey("Ana@Example.COM") == "096d82de057053c08e8632286b28e937285d68f27466ad1db835b2afd8c27a5e")
        #expect(
            Validate.emailKey("ÉLODIE.Ärger@Exemple.FR")
                == "40cb2cb0d4696f3eae858be63e6f80235dd4dfc51ee257b2f09abf7bb69c99ae")
        #expect(Validate.emailKey("") == "b8e68112e205e21269aa8360b95e8ff8bb11d347fdf7a8d94dc3cef7c33993ab")
    }

    @Test("of racing sign-ups with one e-mail exactly one wins")
    func racingSignUps() async throws {
        try await withExecutor { chorus, _ in
            let outcomes = await withTaskGroup(of: Bool.self) { group in
                for index in 0..<16 {
                    group.addTask {
                        let email = index.isMultiple(of: 2) ? "race@example.com" : "RACE@example.com"
                        return
                            (try? await chorus.execute(
                                .registerUser(email: email, password: "secret1", name: "R\(index)"))) != nil
                    }
                }
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(outcomes.count(where: { $0 }) == 1)
            #expect(chorus.log.head == 2, "one UserRegistered and its SessionStarted")
        }
    }

    @Test("repeated follows, unfollows, likes and unlikes append nothing; unknown targets and self-follows are refused")
    func repeatsChangeNothing() async throws {
        try await withExecutor { chorus, _ in
            let ana = try await chorus.register("Ana")
            let bo = try await chorus.register("Bo")
            let post = PostID(try await chorus.execute(.createPost(author: bo, text: "hello")).createdID!)!
            let head = chorus.log.head

            let followed = try await chorus.execute(.follow(follower: ana, followee: bo))
            #expect(followed.appended && followed.position == head.next)
            let again = try await chorus.execute(.follow(follower: ana, followee: bo))
            #expect(!again.appended && again.position == followed.position)
            #expect(try await chorus.execute(.like(user: ana, post: post)).appended)
            #expect(try await !chorus.execute(.like(user: ana, post: post)).appended)
            #expect(try await chorus.execute(.unlike(user: ana, post: post)).appended)
            #expect(try await !chorus.execute(.unlike(user: ana, post: post)).appended)
            #expect(try await chorus.execute(.unfollow(follower: ana, followee: bo)).appended)
            #expect(try await !chorus.execute(.unfollow(follower: ana, followee: bo)).appended)
            #expect(chorus.log.head.rawValue == head.rawValue + 4)

            #expect(
                await domainErrorCode { _ = try await chorus.execute(.follow(follower: ana, followee: ana)) }
                    == .selfFollow)
            #expect(
                await domainErrorCode { _ = try await chorus.execute(.follow(follower: ana, followee: .make())) }
                    == .unknownUser)
            #expect(
                await domainErrorCode { _ = try await chorus.execute(.like(user: ana, post: .make())) } == .unknownPost)
            #expect(
                await domainErrorCode { _ = try await chorus.execute(.sendMessage(from: ana, to: ana, text: "hi")) }
                    == .selfMessage)
            #expect(
                await domainErrorCode { _ = try await chorus.execute(.sendMessage(from: ana, to: bo, text: " \n ")) }
                    == .emptyText)
            #expect(chorus.log.head.rawValue == head.rawValue + 4)
        }
    }

    @Test(
        "posts need text, an image or a repost; limits count characters; media (one's own) and reposted posts must exist"
    )
    func posts() async throws {
        try await withExecutor { chorus, media in
            let ana = try await chorus.register("Ana")
            #expect(
                await domainErrorCode {
                    _ = try await chorus.execute(.createPost(author: ana, caption: "only a caption"))
                } == .emptyText)
            #expect(
                await domainErrorCode {
                    _ = try await chorus.execute(.createPost(author: ana, text: String(repeating: "😀", count: 281)))
                } == .textTooLong)
            #expect(
                try await chorus.execute(.createPost(author: ana, text: String(repeating: "😀", count: 280))).appended)
            #expect(
                await domainErrorCode {
                    _ = try await chorus.execute(.createPost(author: ana, media: [PostImage(id: .make(), alt: nil)]))
                }
                    == .unknownMedia)
            let image = media.add(uploadedBy: ana)
            let photo = try await chorus.execute(
                .createPost(author: ana, caption: "sunset", media: [PostImage(id: image, alt: nil)]))
            #expect(photo.appended)
            // Another's upload is no one else's to show, in a post or as a profile image.
            let bo = try await chorus.register("Bo")
            let head = chorus.log.head
            #expect(
                await domainErrorCode {
                    _ = try await chorus.execute(.createPost(author: bo, media: [PostImage(id: image, alt: nil)]))
                } == .unknownMedia)
            #expect(
                await domainErrorCode {
                    _ = try await chorus.execute(.editProfile(user: bo, profileImage: .set(image)))
                }
                    == .unknownMedia)
            #expect(chorus.log.head == head)
            #expect(
                await domainErrorCode { _ = try await chorus.execute(.createPost(author: ana, repostOf: .make())) }
                    == .unknownPost)
            #expect(try await chorus.execute(.createPost(author: ana, repostOf: PostID(photo.createdID!)!)).appended)
            #expect(
                await domainErrorCode {
                    _ = try await chorus.execute(.editProfile(user: ana, profileImage: .set(.make())))
                } == .unknownMedia)
            #expect(try await chorus.execute(.editProfile(user: ana, bio: "hi", profileImage: .set(image))).appended)
            #expect(
                await domainErrorCode {
                    _ = try await chorus.execute(
                        .addComment(
                            author: ana, post: PostID(photo.createdID!)!, text: String(repeating: "a", count: 1001)))
                } == .textTooLong)
            #expect(chorus.log.head == 8, "two registrations (two events each) and four commands")
        }
    }

    @Test("an idempotency key replays the first result and appends nothing; another request under it conflicts")
    func idempotency() async throws {
        try await withExecutor { chorus, _ in
            let ana = try await chorus.register("Ana")
            let first = try await chorus.execute(.createPost(author: ana, text: "once"), idempotencyKey: "k-1")
            let retry = try await chorus.execute(.createPost(author: ana, text: "  once "), idempotencyKey: "k-1")
            #expect(retry == first, "the retry, normalised to the same request, gets the first answer")
            #expect(chorus.log.head == first.position)
            #expect(
                await domainErrorCode {
                    _ = try await chorus.execute(.createPost(author: ana, text: "different"), idempotencyKey: "k-1")
                } == .idempotencyConflict)
            let bo = try await chorus.register("Bo")
            #expect(
                try await chorus.execute(.createPost(author: bo, text: "once"), idempotencyKey: "k-1").appended,
                "keys belong to their user")
        }
    }
}
