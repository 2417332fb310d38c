import ChorusDomain
import ChorusProjections
import Foundation
import Hummingbird

/// Hashtag pages and hashtag search.
struct HashtagRoutes {
    let endpoints: Endpoints

    func add(to group: RouterGroup<ChorusRequestContext>) {
        let renderer = endpoints.renderer
        group.get("hashtags/:tag/posts") { request, context in
            let caller = try context.requireCaller()
            let typed = context.parameters.get("tag") ?? ""
            // Most tags are sent as they are; Korean ones percent-encoded.
            let decoded = typed.utf8.contains(UInt8(ascii: "%")) ? typed.removingPercentEncoding ?? typed : typed
            guard let tag = Hashtags.folded(decoded) else {
                throw APIError.badRequest("\(typed) is not a hashtag: letters, digits and _, not digits alone")
            }
            let page = try Endpoints.page(request)
            let kind = try Endpoints.mediaKind(request)
            return try await endpoints.readPage(request, caller: caller) { view, json in
                _ = try renderer.writePostPage(to: &json) {
                    try view.hashtagPosts(tag, viewer: caller.user, kind: kind, page: page, $0)
                }
            }
        }
        group.get("search/hashtags") { request, context in
            _ = try context.requireCaller()
            let page = try Endpoints.page(request)
            var query = request.uri.queryParameters["q"].map(String.init) ?? ""
            if query.hasPrefix("#") { query.removeFirst() }
            // A prefix of a tag, folded as tags are; no query lists every tag.
            let prefix = query.isEmpty ? "" : Hashtags.folded(query) ?? normalized(query).lowercased()
            return try await endpoints.read(request) { view in
                renderer.page(try view.searchHashtags(prefix, page: page)) { HashtagJSON(tag: $0.tag, posts: $0.posts) }
            }
        }
    }
}

/// One hit of hashtag search.
struct HashtagJSON: JSONWritable {
    let tag: String
    let posts: UInt64

    func write(to json: inout JSONWriter) {
        json.object {
            $0.field("tag", tag)
            $0.field("posts", posts)
        }
    }
}
