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
        try await chorus.post(caption: "Harbour at dawn", image: photo.id)  // the next read shows it: read-your-writes
        for try await post in chorus.followingFeed() { print(post.author.name, post.repostedBy?.name ?? "") }
        for try await update in try await chorus.live([.feed, .notifications]) {  // resumes by itself after a drop
            if case .notification(let notification) = update.event {
                print(notification._type, notification.actor.name)
            }
        }
        // end of sample
    }
}
