import ChorusBackend
import ChorusDomain
import ChorusLog
import ChorusProjections
import Foundation
import Hummingbird

/// The caller's muted words: the posts holding them are left out of their feeds, hashtag pages, notifications and
/// live streams while they are in force.
struct MutedWordRoutes {
    let endpoints: Endpoints

    struct NewMutedWord: Decodable {
        let word: String
        let expiresAt: String?
        let scope: String?

        private enum CodingKeys: String, CodingKey { case word, expiresAt, scope }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            word = try container.decode(String.self, forKey: .word)
            expiresAt = try container.decodeUnlessMissing(String.self, forKey: .expiresAt)
            scope = try container.decodeUnlessMissing(String.self, forKey: .scope)
        }
    }

    func add(to group: RouterGroup<ChorusRequestContext>) {
        endpoints.getPage(
            group, "me/muted-words", { view, caller, page in try view.mutedWords(of: caller.user, page: page) },
            render: MutedWordJSON.init)
        group.post("me/muted-words") { request, context in
            let caller = try context.requireCaller()
            let (body, bytes) = try await JSONBody.decode(NewMutedWord.self, from: request)
            let command = Command.muteWord(
                user: caller.user, word: body.word, expiresAt: try body.expiresAt.map(Self.futureTime),
                scope: try body.scope.map { try Endpoints.choice($0, field: "scope") } ?? .everyone)
            return try await endpoints.write(
                request, context: context, requestBody: bytes, status: .created, command: command
            ) { view, result in
                guard let id = result.createdID.map(MutedWordID.init(unchecked:)),
                    let word = try view.mutedWord(id, of: caller.user)
                else { throw APIError.unavailable("the read models do not show the muted word yet") }
                return MutedWordJSON(word)
            }
        }
        group.delete("me/muted-words/:id") { request, context in
            let caller = try context.requireCaller()
            let id = try Endpoints.pathID(context, "id", as: MutedWordID.self)
            return try await endpoints.writeAnsweringNothing(
                request, context: context, command: .unmuteWord(user: caller.user, id: id))
        }
    }

    /// `text`, an RFC 3339 time after now.
    private static func futureTime(_ text: String) throws -> EventTime {
        let formats = [Date.ISO8601FormatStyle(includingFractionalSeconds: true), Date.ISO8601FormatStyle()]
        guard let date = formats.lazy.compactMap({ try? Date(text, strategy: $0) }).first else {
            throw APIError(DomainError(.invalidField, "expiresAt: a time such as 2026-12-31T23:59:59Z"))
        }
        guard date > Date() else { throw APIError(DomainError(.invalidField, "expiresAt: a time to come")) }
        return EventTime(date)
    }
}

/// A muted word as its user sees it.
struct MutedWordJSON: JSONWritable {
    let word: MutedWord

    init(_ word: MutedWord) { self.word = word }

    func write(to json: inout JSONWriter) {
        json.object {
            $0.field("id", word.id.rawValue)
            $0.field("word", word.word)
            $0.field("expiresAt", word.expiresAt)
            $0.field("scope", word.scope.rawValue)
        }
    }
}
