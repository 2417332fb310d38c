import ChorusClient
import Foundation

// The samples of the client SDK in README.md and docs/, compiled with the tests (see DocSampleTests).
enum ClientSamples {
    /// README.md, "The Swift client SDK in ten lines", and docs/SDK.md.
    static func tenLines(jpegData: Data) async throws {
        // sample
        let chorus = ChorusClient(serverURL: URL(string: "http://127.0.0.1:8080")!)  // tokens: a TokenStore (Keychain)
        try await chorus.signUp(email: "ana@example.com", password: "secret1", name: "Ana")
        let photo = try await chorus.uploadImage(jpegData, contentType: .jpeg)
        try await chorus.post(caption: "Harbour at dawn", media: [PostImage(alt: "Boats at dawn", id: photo.id)])
        for try await post in chorus.followingFeed() { print(post.author.name, post.repostedBy?.name ?? "") }
        for try await update in try await chorus.live([.feed, .notifications]) {  // resumes by itself after a drop
            if case .notification(let notification) = update.event {
                print(notification._type, notification.actor.name)
            }
        }
        // end of sample
    }
}

/// docs/PUSH.md, the app's side.
enum PushSamples {
    static func register(chorus: ChorusClient, deviceToken: Data) async throws {
        // sample
        try await chorus.registerDevice(token: deviceToken, service: .apns(sandbox: true))
        // end of sample
    }

    static func settings(chorus: ChorusClient) async throws {
        // sample
        let settings = try await chorus.pushSettings()
        print(settings.likes, settings.messages)
        try await chorus.changePushSettings(likes: .followed, reposts: .off)
        // end of sample
    }

    static func logOut(chorus: ChorusClient, device: Device) async throws {
        // sample
        try await chorus.logOut(forgettingDevice: device.id)
        // end of sample
    }
}

/// The samples of the SDK's DocC catalog (Sources/ChorusClient/ChorusClient.docc).
enum ClientCatalogSamples {
    /// ChorusClient.md, the overview.
    static func overview(jpegData: Data) async throws {
        // sample
        let chorus = ChorusClient(serverURL: URL(string: "https://chorus.example.com")!)
        try await chorus.signUp(email: "ana@example.com", password: "secret1", name: "Ana")
        let photo = try await chorus.uploadImage(jpegData, contentType: .jpeg)
        try await chorus.post(caption: "Harbour at dawn", media: [PostImage(alt: "Boats at dawn", id: photo.id)])
        for try await post in chorus.followingFeed() { print(post.author.name, post.caption) }
        for try await update in try await chorus.live([.feed, .notifications]) {
            if case .post(let post) = update.event { print("new:", post.id) }
        }
        // end of sample
    }

    /// GettingStarted.md, "Sign in".
    static func signIn(serverURL: URL) -> ChorusClient {
        // sample
        struct KeychainTokens: TokenStore {
            func token() async -> String? { Keychain.read("chorus-token") }
            func setToken(_ token: String?) async { Keychain.write("chorus-token", token) }
        }
        let chorus = ChorusClient(serverURL: serverURL, tokens: KeychainTokens())
        // end of sample
        return chorus
    }

    /// GettingStarted.md, "Read a screen".
    static func readAScreen(chorus: ChorusClient) async throws -> [Post] {
        var shown: [Post] = []
        func show(_ post: Post) { shown.append(post) }
        // sample
        for try await post in chorus.followingFeed() {
            show(post)  // post.author is the author's profile as of now
            if shown.count == 20 { break }  // no more pages are read
        }
        // end of sample
        return shown
    }

    /// GettingStarted.md, "Handle errors".
    static func handleErrors(chorus: ChorusClient, userID: String, showBlockedAlert: () -> Void) async throws {
        // sample
        do {
            try await chorus.follow(userID)
        } catch let error as ChorusError where error.code == "blocked" {
            showBlockedAlert()
        }
        // end of sample
    }
}

/// GettingStarted.md, "Listen": a post's screen, as an app's view model holds it.
@MainActor
final class PostScreenSample {
    let chorus: ChorusClient
    let postID: String
    var task = Task<Void, any Error> {}
    var comments: [Comment] = []
    var likeCount = 0

    init(chorus: ChorusClient, postID: String) { (self.chorus, self.postID) = (chorus, postID) }

    func append(_ comment: Comment) { comments.append(comment) }
    func remove(_ id: String) { comments.removeAll { $0.id == id } }

    func listen() {
        // sample
        task = Task {
            for try await update in try await chorus.live([.post(postID)]) {
                switch update.event {
                case .comment(let comment): append(comment)
                case .commentRemoved(let id, _): remove(id)
                case .likes(_, let count): likeCount = count
                default: break
                }
            }
        }
        // later
        task.cancel()
        // end of sample
    }
}

/// Where an app keeps its token: the Keychain, in memory here.
private enum Keychain {
    nonisolated(unsafe) private static var items: [String: String] = [:]
    static func read(_ key: String) -> String? { items[key] }
    static func write(_ key: String, _ value: String?) { items[key] = value }
}
