import ChorusDataKeys
import ChorusDomain
import ChorusTestSupport
import Crypto
import Testing

@Suite("Data keys")
struct DataKeyStoreTests {
    @Test("keys read at once are the stored ones, a destroyed key reads as destroyed, and none is read from disk again")
    func preload() async throws {
        try await withTemporaryDirectory { directory in
            let users = (0..<300).map { _ in UserID.make() }
            var made: [UserID: [UInt8]] = [:]
            let writing = try DataKeyStore(directory: directory)
            for user in users { made[user] = try writing.makeKey(for: user).withUnsafeBytes { Array($0) } }
            try writing.destroy(users[0])
            writing.close()

            // Read whole into an empty cache, and into one that holds a key already.
            for cachedFirst in [nil, users[7]] {
                let store = try DataKeyStore(directory: directory)
                if let cachedFirst { _ = try store.key(of: cachedFirst) }
                try store.preload()
                // Closed: a key that was not read at once would have to come from the file, and fail.
                store.close()
                #expect(try store.key(of: users[0]) == nil, "destroyed")
                for user in users.dropFirst() {
                    #expect(try store.key(of: user)?.withUnsafeBytes { Array($0) } == made[user])
                }
                #expect(throws: (any Error).self, "never stored") { try store.key(of: UserID.make()) }
            }
        }
    }
}
