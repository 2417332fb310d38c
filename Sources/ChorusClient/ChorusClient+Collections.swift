import OpenAPIRuntime

/// Saved posts and hashtags: the Saved screen, and a tag's page and search.
extension ChorusClient {
    /// Saves a post for later (Instagram's Saved): only the caller sees it, in ``bookmarks(mediaOnly:)``.
    @discardableResult
    public func bookmark(_ post: String) async throws -> Bool {
        try await unwrapping { try await api.bookmark(path: .init(id: post)).ok.body.json.bookmarked }
    }

    @discardableResult
    public func unbookmark(_ post: String) async throws -> Bool {
        try await unwrapping { try await api.unbookmark(path: .init(id: post)).ok.body.json.bookmarked }
    }

    /// The posts the caller saved, most recently saved first; with `mediaOnly`, only those with an image.
    public func bookmarks(mediaOnly: Bool = false) -> Pages<Post> {
        Pages { cursor in
            let page = try await unwrapping {
                try await self.api.bookmarks(query: .init(cursor: cursor, media: mediaOnly)).ok.body.json
            }
            return (page.items, page.nextCursor)
        }
    }

    /// The posts holding `tag` (with or without its `#`, any case), newest first; with `mediaOnly`, only those with an
    /// image.
    public func posts(taggedWith tag: String, mediaOnly: Bool = false) -> Pages<Post> {
        let tag = tag.hasPrefix("#") ? String(tag.dropFirst()) : tag
        return Pages { cursor in
            let page = try await unwrapping {
                try await self.api.hashtagPosts(path: .init(tag: tag), query: .init(cursor: cursor, media: mediaOnly))
                    .ok.body.json
            }
            return (page.items, page.nextCursor)
        }
    }

    /// Hashtags starting with `prefix`, most used first, each with how many posts hold it.
    public func searchHashtags(_ prefix: String = "") -> Pages<Components.Schemas.HashtagCount> {
        Pages { cursor in
            let page = try await unwrapping {
                try await self.api.searchHashtags(query: .init(q: prefix, cursor: cursor)).ok.body.json
            }
            return (page.items, page.nextCursor)
        }
    }
}
