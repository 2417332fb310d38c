import ChorusLog

struct CreatePost: Decision {
    let post: PostCreated

    static func prepare(
        author: UserID, caption: String?, text: String?, image: MediaID?, repostOf: PostID?,
        _ context: CommandPreparation
    ) throws(DomainError) -> PreparedCommand {
        let caption = try Validate.optionalText(caption, field: "caption", limit: FieldLimits.caption)
        let text = try Validate.optionalText(text, field: "text", limit: FieldLimits.postText)
        guard !text.isEmpty || image != nil || repostOf != nil else {
            throw DomainError(.emptyText, "a post needs text, an image or a post to repost")
        }
        if let image, !context.media.contains(image) { throw DomainError(.unknownMedia, "no media \(image)") }
        let post = PostCreated(
            post: .make(), author: author, caption: caption, text: text, image: image, repostOf: repostOf)
        return PreparedCommand(
            caller: author.rawValue, tag: 3,
            fields: {
                $0.write(caption)
                $0.write(text)
                $0.write(image)
                $0.write(repostOf)
            }, decision: CreatePost(post: post))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        var post = self.post
        try context.requireUser(post.author)
        if let named = post.repostOf {
            try context.requirePost(named)
            // A repost always points at an original: one of a plain repost reposts what that one reposts.
            let original = try context.state.repostTarget(of: named, in: context.transaction)
            try context.refuseIfBlocked(post.author, original.author)
            post.repostOf = original.post
        }
        return try context.record(.postCreated(post), created: post.post.rawValue)
    }
}

/// Changes the caption or the text of one's own post.
struct EditPost: Decision {
    let edit: PostEdited

    static func prepare(author: UserID, post: PostID, caption: String?, text: String?) throws(DomainError)
        -> PreparedCommand
    {
        let edit = PostEdited(
            post: post, author: author,
            caption: try caption.map { (caption) throws(DomainError) in
                try Validate.optionalText(caption, field: "caption", limit: FieldLimits.caption)
            },
            text: try text.map { (text) throws(DomainError) in
                try Validate.optionalText(text, field: "text", limit: FieldLimits.postText)
            })
        guard edit.caption != nil || edit.text != nil else {
            throw DomainError(.invalidField, "an edit changes the caption, the text or both")
        }
        return PreparedCommand(
            caller: author.rawValue, tag: 12,
            fields: {
                $0.write(post)
                $0.write(edit.caption)
                $0.write(edit.text)
            }, decision: EditPost(edit: edit))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        try context.requireUser(edit.author)
        let post = try context.requireStandingPost(edit.post)
        guard post.author == edit.author else {
            throw DomainError(.forbidden, "only its author can edit post \(edit.post)")
        }
        if edit.text == "", !post.textMayBeEmpty {
            throw DomainError(.emptyText, "a post without an image or a reposted post needs text")
        }
        return try context.record(.postEdited(edit))
    }
}

/// Deletes one's own post, and with it its plain reposts; deleting it again changes nothing.
struct DeletePost: Decision {
    let author: UserID
    let post: PostID

    static func prepare(author: UserID, post: PostID) -> PreparedCommand {
        PreparedCommand(
            caller: author.rawValue, tag: 13, fields: { $0.write(post) },
            decision: DeletePost(author: author, post: post))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        try context.requireUser(author)
        guard let found = try context.state.post(post, in: context.transaction) else {
            throw DomainError(.unknownPost, "no post \(post)")
        }
        guard found.author == author else { throw DomainError(.forbidden, "only its author can delete post \(post)") }
        guard !found.deleted else { return context.unchanged }
        return try context.recordEach(try context.state.deletions(of: post, found, in: context.transaction))
    }
}
