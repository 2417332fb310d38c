import Foundation
import OpenAPIRuntime

public typealias MutedWord = Components.Schemas.MutedWord
public typealias MutedWordScope = Components.Schemas.MutedWordScope

/// Muted words: posts holding them are left out of the caller's feeds, hashtag pages, notifications and live streams.
extension ChorusClient {
    /// Mutes a word or phrase, until `expiry` if given; with `scope: .notFollowing`, only in posts of users the caller
    /// does not follow.
    @discardableResult
    public func muteWord(_ word: String, until expiry: Date? = nil, scope: MutedWordScope = .everyone)
        async throws -> MutedWord
    {
        let expiresAt = expiry.map { Date.ISO8601FormatStyle(includingFractionalSeconds: true).format($0) }
        return try await unwrapping {
            try await api.muteWord(body: .json(.init(expiresAt: expiresAt, scope: scope, word: word))).created.body
                .json
        }
    }

    public func unmuteWord(_ id: String) async throws {
        _ = try await unwrapping { try await api.unmuteWord(path: .init(id: id)).noContent }
    }

    /// The caller's muted words, oldest first.
    public func mutedWords() -> Pages<MutedWord> {
        Pages { cursor in
            let page = try await unwrapping {
                try await self.api.myMutedWords(query: .init(cursor: cursor)).ok.body.json
            }
            return (page.items, page.nextCursor)
        }
    }
}
