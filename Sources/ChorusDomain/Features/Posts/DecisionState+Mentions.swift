import ChorusLog

/// What the decisions of mentions read in the state (the table `post-mentions`).
extension DecisionState {
    /// The accounts `text` mentions when `author` writes it: those that have its handles now
    /// (``Mentions/handles(in:)``), the first ``Mentions/maximum``, none that blocked the author or that the author
    /// blocked.
    func mentioned(in text: String, by author: UserID, in state: some StateReader) throws -> [UserID] {
        var mentioned: [UserID] = []
        for handle in Mentions.handles(in: text) where mentioned.count < Mentions.maximum {
            guard let user = try user(withHandle: handle, in: state), !mentioned.contains(user),
                try user == author || !eitherBlocked(author, user, in: state)
            else { continue }
            mentioned.append(user)
        }
        return mentioned
    }

    /// Whether `post`'s caption or text mentions `user` (as it stands: a deleted post mentions no one).
    func mentions(_ post: PostID, _ user: UserID, in state: some StateReader) throws -> Bool {
        for field in PostMentions.Field.allCases {
            let found = try state.withValue(for: Self.key(post.rawValue, field.rawValue), in: postMentions) { value in
                try value.map { try PostMentions.decode(Array($0)).contains(user) } ?? false
            }
            if found { return true }
        }
        return false
    }

    /// The changes of one field of `post` mentioning `users` from now on.
    static func putMentions(
        _ users: [UserID], of post: PostID, in field: PostMentions.Field, state: DecisionState,
        _ changes: inout ChangeList
    ) {
        let key = ChangeList.Key(post.rawValue, field.rawValue)
        guard !users.isEmpty else { return changes.remove(state.postMentions, key) }
        changes.put(state.postMentions, key, PostMentions.encode(users))
    }
}
