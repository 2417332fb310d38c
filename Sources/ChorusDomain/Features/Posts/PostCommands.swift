import ChorusLog

struct CreatePost: Decision {
    let post: PostCreated
    let catalog: any MediaCatalog

    static func prepare(
        author: UserID, caption: String?, text: String?, media: [PostImage], repostOf: PostID?, replies: ReplyPolicy,
        _ context: CommandPreparation
    ) throws(DomainError) -> PreparedCommand {
        let caption = try Validate.optionalText(caption, field: "caption", limit: FieldLimits.caption)
        let text = try Validate.optionalText(text, field: "text", limit: FieldLimits.postText)
        let media = try Validate.postImages(media)
        guard !text.isEmpty || !media.isEmpty || repostOf != nil else {
            throw DomainError(.emptyText, "a post needs text, an image or a post to repost")
        }
        try requireStored(media, by: author, in: context.media)
        let post = PostCreated(
            post: .make(), author: author, caption: caption, text: text, media: media, repostOf: repostOf,
            replies: replies)
        return PreparedCommand(
            caller: author.rawValue, tag: 3,
            fields: {
                $0.write(caption)
                $0.write(text)
                $0.write(media.first?.id)
                $0.write(repostOf)
                // Nothing for everyone, which is all a post allowed before.
                if replies != .everyone { $0.write(replies.rawValue) }
                // Nothing more for one image without alt text, which is all a post could hold before.
                guard media.count > 1 || media.first?.alt != nil else { return }
                for image in media.dropFirst() { $0.write(image.id) }
                for image in media { $0.write(image.alt) }
            }, decision: CreatePost(post: post, catalog: context.media))
    }

    /// Throws unless every image is stored, uploaded by `author`.
    static func requireStored(
        _ media: [PostImage], by author: UserID, in catalog: any MediaCatalog
    ) throws(DomainError) {
        for image in media where !catalog.contains(image.id, uploadedBy: author) {
            throw DomainError(.unknownMedia, "no media \(image.id) uploaded by the author")
        }
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        var post = self.post
        try context.requireUser(post.author)
        // Asked again in the writer: an image not attached for a day is removed in the writer too
        // (``CommandExecutor/removeUnattachedMedia(_:hide:show:)``), so it is either attached here or gone.
        try Self.requireStored(post.media, by: post.author, in: catalog)
        if let named = post.repostOf {
            try context.requirePost(named)
            // A repost always points at an original: one of a plain repost reposts what that one reposts.
            let original = try context.state.repostTarget(of: named, in: context.transaction)
            try context.refuseUnlessReadable(by: post.author, postsOf: original.author)
            post.repostOf = original.post
        }
        let state = context.state
        post.mentions = PostMentions(
            caption: try state.mentioned(in: post.caption, by: post.author, in: context.transaction),
            text: try state.mentioned(in: post.text, by: post.author, in: context.transaction))
        return try context.record(.postCreated(post), created: post.post.rawValue)
    }
}

/// Changes the caption, the text, the alt texts or who may comment of one's own post.
struct EditPost: Decision {
    let edit: PostEdited
    /// The images the edit names, in order: the post's own.
    let media: [MediaID]?

    static func prepare(
        author: UserID, post: PostID, caption: String?, text: String?, media: [PostImage]?, replies: ReplyPolicy?
    ) throws(DomainError) -> PreparedCommand {
        let media = try media.map { (media) throws(DomainError) in try Validate.postImages(media) }
        let edit = PostEdited(
            post: post, author: author,
            caption: try caption.map { (caption) throws(DomainError) in
                try Validate.optionalText(caption, field: "caption", limit: FieldLimits.caption)
            },
            text: try text.map { (text) throws(DomainError) in
                try Validate.optionalText(text, field: "text", limit: FieldLimits.postText)
            },
            alts: media?.map(\.alt), replies: replies)
        guard edit.changesContent || replies != nil else {
            throw DomainError(
                .invalidField, "an edit changes the caption, the text, the images' alt texts or who may reply")
        }
        return PreparedCommand(
            caller: author.rawValue, tag: 12,
            fields: {
                $0.write(post)
                $0.write(edit.caption)
                $0.write(edit.text)
                if let replies { $0.write(replies.rawValue) }
                guard let media else { return }
                $0.write(UInt8(media.count))
                for image in media {
                    $0.write(image.id)
                    $0.write(image.alt)
                }
            }, decision: EditPost(edit: edit, media: media?.map(\.id)))
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
        if let media, media != post.media {
            throw DomainError(
                .invalidField,
                "media must name the post's \(post.media.count) images, in their order, to change alt texts"
            )
        }
        var edit = self.edit
        edit.captionMentions = try edit.caption.map {
            try context.state.mentioned(in: $0, by: edit.author, in: context.transaction)
        }
        edit.textMentions = try edit.text.map {
            try context.state.mentioned(in: $0, by: edit.author, in: context.transaction)
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
