import ChorusLog

/// One of a post's images: an uploaded image's id, and the text that describes it to those who cannot see it.
public struct PostImage: Sendable, Hashable {
    public var id: MediaID
    /// Nil when the author gave none.
    public var alt: String?
    public init(id: MediaID, alt: String?) {
        self.id = id
        self.alt = alt
    }
}

/// Who may comment on a post besides its author, who always may.
public enum ReplyPolicy: String, Sendable, Hashable, CaseIterable {
    case everyone
    /// The users the author follows.
    case following
    /// The users the post mentions.
    case mentioned
    case nobody

    /// As events and the state store it: 0 for everyone, which every post before version 4 of ``PostCreated`` allows.
    public var code: UInt8 { UInt8(Self.allCases.firstIndex(of: self)!) }

    public init(code: UInt8) throws {
        guard Int(code) < Self.allCases.count else { throw PayloadError.badFlag(code) }
        self = Self.allCases[Int(code)]
    }
}

public struct PostCreated: Sendable, Hashable {
    public var post: PostID
    public var author: UserID
    public var caption: String
    public var text: String
    /// Its images in the order the author gave them, at most ``PostCreated/maximumImages``.
    public var media: [PostImage]
    public var repostOf: PostID?
    public var replies: ReplyPolicy
    /// Resolved by the decision (``DecisionState/mentioned(in:by:in:)``).
    public var mentions: PostMentions
    public init(
        post: PostID, author: UserID, caption: String, text: String, media: [PostImage], repostOf: PostID?,
        replies: ReplyPolicy = .everyone, mentions: PostMentions = .none
    ) {
        self.post = post
        self.author = author
        self.caption = caption
        self.text = text
        self.media = media
        self.repostOf = repostOf
        self.replies = replies
        self.mentions = mentions
    }

    public static let maximumImages = 4
}

/// The author changed a post's caption, text, alt texts or who may comment; only the fields that changed are present.
/// The time of the edit is the event's.
public struct PostEdited: Sendable, Hashable {
    public var post: PostID
    public var author: UserID
    public var caption: String?
    public var text: String?
    /// The alt text of each of the post's images, in their order (nil for one without).
    public var alts: [String?]?
    public var replies: ReplyPolicy?
    /// Whom the new caption mentions, present with it (resolved by the decision).
    public var captionMentions: [UserID]?
    /// Whom the new text mentions, present with it.
    public var textMentions: [UserID]?
    public init(
        post: PostID, author: UserID, caption: String?, text: String?, alts: [String?]? = nil,
        replies: ReplyPolicy? = nil, captionMentions: [UserID]? = nil, textMentions: [UserID]? = nil
    ) {
        self.post = post
        self.author = author
        self.caption = caption
        self.text = text
        self.alts = alts
        self.replies = replies
        self.captionMentions = captionMentions
        self.textMentions = textMentions
    }

    /// Whether it changes what the post says (its caption, text or alt texts), and so when it was last edited; who may
    /// comment alone does not.
    public var changesContent: Bool { caption != nil || text != nil || alts != nil }
}

/// A post was deleted: by its author, or with the post it plainly reposted. `author`, `postedAt` (the position of its
/// ``PostCreated``) and `repostOf` are facts of the decision, recorded so that whoever follows the log can take out
/// everything the post put in without looking it up.
public struct PostDeleted: Sendable, Hashable {
    public var post: PostID
    public var author: UserID
    public var postedAt: LogPosition
    /// The post it reposted, if it was a repost.
    public var repostOf: PostID?
    public init(post: PostID, author: UserID, postedAt: LogPosition, repostOf: PostID?) {
        self.post = post
        self.author = author
        self.postedAt = postedAt
        self.repostOf = repostOf
    }
}

/// Version 5 adds whom the caption and the text mention, in plain after who may comment (``PayloadWriter/write(mentions:)``
/// each); version 4 adds who may comment (``ReplyPolicy/code``) in plain after the images' ids; version 3 holds a list of
/// images, their ids in plain and their alt texts sealed after the caption and the text; version 2 one image id, the caption and the text sealed under the author's key after the other fields; version 1
/// all in plain.
extension PostCreated: StoredEvent {
    static let typeName = "PostCreated"
    static let schemaVersion: UInt16 = 5
    var stream: StreamID { .post(post) }
    var domainEvent: DomainEvent { .postCreated(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(post)
        payload.write(author)
        payload.write(repostOf)
        payload.write(UInt8(media.count))
        for image in media { payload.write(image.id) }
        payload.write(replies.code)
        payload.write(mentions: mentions.caption)
        payload.write(mentions: mentions.text)
        try payload.writeSealed(by: author, in: Self.typeName, keys: keys) {
            $0.write(caption)
            $0.write(text)
            for image in media { $0.write(image.alt) }
        }
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        let post = try payload.read(PostID.self)
        let author = try payload.read(UserID.self)
        switch version {
        case 1:
            let (caption, text) = (try payload.readString(), try payload.readString())
            let image = try payload.readOptional(MediaID.self)
            self.init(
                post: post, author: author, caption: caption, text: text,
                media: image.map { [PostImage(id: $0, alt: nil)] } ?? [],
                repostOf: try payload.readOptional(PostID.self))
        case 2:
            let image = try payload.readOptional(MediaID.self)
            let repostOf = try payload.readOptional(PostID.self)
            var fields = try payload.openSealed(by: author, in: Self.typeName, keys: keys)
            self.init(
                post: post, author: author, caption: try fields?.readString() ?? "",
                text: try fields?.readString() ?? "", media: image.map { [PostImage(id: $0, alt: nil)] } ?? [],
                repostOf: repostOf)
            try fields?.finish()
        default:
            let repostOf = try payload.readOptional(PostID.self)
            let count = Int(try payload.readByte())
            guard count <= Self.maximumImages else { throw PayloadError.countOutOfRange(UInt8(count)) }
            let ids = try (0..<count).map { _ in try payload.read(MediaID.self) }
            let replies = version >= 4 ? try ReplyPolicy(code: try payload.readByte()) : .everyone
            let mentions =
                version >= 5
                ? PostMentions(caption: try payload.readMentions(), text: try payload.readMentions()) : .none
            var fields = try payload.openSealed(by: author, in: Self.typeName, keys: keys)
            let caption = try fields?.readString() ?? ""
            let text = try fields?.readString() ?? ""
            // An erased author's alt texts are gone with the rest of what they wrote.
            var media: [PostImage] = []
            for id in ids { media.append(PostImage(id: id, alt: try fields?.readOptionalString())) }
            self.init(
                post: post, author: author, caption: caption, text: text, media: media, repostOf: repostOf,
                replies: replies, mentions: mentions)
            try fields?.finish()
        }
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        let stored = DecisionState.PostState(
            author: author, textMayBeEmpty: !media.isEmpty || repostOf != nil, deleted: false, postedAt: position,
            repostOf: repostOf, media: media.map(\.id))
        changes.put(state.posts, .init(post.rawValue), stored.encoded())
        if DecisionState.isPlainRepost(self) {
            changes.put(state.reposts, .init(repostOf!.rawValue, post.rawValue), [])
        }
        for image in media { changes.put(state.attachedMedia, .init(image.id.rawValue), []) }
        if replies != .everyone { changes.put(state.replyRules, .init(post.rawValue), [replies.code]) }
        for (users, field) in [(mentions.caption, PostMentions.Field.caption), (mentions.text, .text)]
        where !users.isEmpty {
            DecisionState.putMentions(users, of: post, in: field, state: state, &changes)
        }
    }
}

/// Version 3 seals the alt texts after the caption and the text (a count first, none when they did not change);
/// version 2 seals the caption and the text as ``PostCreated`` 2 does; version 1 holds them in plain. Version 4 adds
/// who may comment after the sealed fields, in plain: its code plus one, 0 when it did not change. Version 5 adds whom
/// the new caption and the new text mention after it, each behind a presence byte.
extension PostEdited: StoredEvent {
    static let typeName = "PostEdited"
    static let schemaVersion: UInt16 = 5
    var stream: StreamID { .post(post) }
    var domainEvent: DomainEvent { .postEdited(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(post)
        payload.write(author)
        try payload.writeSealed(by: author, in: Self.typeName, keys: keys) {
            $0.write(caption)
            $0.write(text)
            // The count plus one, 0 when the alt texts did not change.
            $0.write(UInt8(alts.map { $0.count + 1 } ?? 0))
            for alt in alts ?? [] { $0.write(alt) }
        }
        payload.write(replies.map { $0.code + 1 } ?? 0)
        for mentions in [captionMentions, textMentions] {
            payload.write(UInt8(mentions == nil ? 0 : 1))
            if let mentions { payload.write(mentions: mentions) }
        }
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        let post = try payload.read(PostID.self)
        let author = try payload.read(UserID.self)
        guard version >= 2 else {
            self.init(
                post: post, author: author, caption: try payload.readOptionalString(),
                text: try payload.readOptionalString())
            return
        }
        var fields = try payload.openSealed(by: author, in: Self.typeName, keys: keys)
        let caption = try fields?.readOptionalString()
        let text = try fields?.readOptionalString()
        var alts: [String?]?
        if version >= 3, let count = try fields?.readByte(), count > 0 {
            guard count <= PostCreated.maximumImages + 1 else { throw PayloadError.countOutOfRange(count) }
            alts = try (1..<count).map { _ in try fields?.readOptionalString() }
        }
        try fields?.finish()
        var replies: ReplyPolicy?
        if version >= 4, case let code = try payload.readByte(), code > 0 { replies = try ReplyPolicy(code: code - 1) }
        var mentions: [[UserID]?] = [nil, nil]
        if version >= 5 {
            for index in mentions.indices {
                switch try payload.readByte() {
                case 0: break
                case 1: mentions[index] = try payload.readMentions()
                case let flag: throw PayloadError.badFlag(flag)
                }
            }
        }
        self.init(
            post: post, author: author, caption: caption, text: text, alts: alts, replies: replies,
            captionMentions: mentions[0], textMentions: mentions[1])
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        switch replies {
        case nil: break
        case .everyone?: changes.remove(state.replyRules, .init(post.rawValue))
        case let replies?: changes.put(state.replyRules, .init(post.rawValue), [replies.code])
        }
        if let captionMentions {
            DecisionState.putMentions(captionMentions, of: post, in: .caption, state: state, &changes)
        }
        if let textMentions { DecisionState.putMentions(textMentions, of: post, in: .text, state: state, &changes) }
    }
}

extension PostDeleted: StoredEvent {
    static let typeName = "PostDeleted"
    static let schemaVersion: UInt16 = 1
    var stream: StreamID { .post(post) }
    var domainEvent: DomainEvent { .postDeleted(self) }

    func encode(to payload: inout PayloadWriter, keys: any PersonalDataKeys) throws {
        payload.write(post)
        payload.write(author)
        payload.write(postedAt.rawValue)
        payload.write(repostOf)
    }

    init(from payload: inout PayloadReader, version: UInt16, keys: borrowing any PersonalDataKeys) throws {
        self.init(
            post: try payload.read(PostID.self), author: try payload.read(UserID.self),
            postedAt: LogPosition(try payload.readUInt64()), repostOf: try payload.readOptional(PostID.self))
    }

    func changeState(_ state: DecisionState, at position: LogPosition, in changes: inout DecisionState.ChangeList) {
        let stored = DecisionState.PostState(
            author: author, textMayBeEmpty: false, deleted: true, postedAt: postedAt, repostOf: repostOf, media: [])
        changes.put(state.posts, .init(post.rawValue), stored.encoded())
        changes.remove(state.replyRules, .init(post.rawValue))
        for field in PostMentions.Field.allCases {
            changes.remove(state.postMentions, .init(post.rawValue, field.rawValue))
        }
        if let original = repostOf { changes.remove(state.reposts, .init(original.rawValue, post.rawValue)) }
    }
}
