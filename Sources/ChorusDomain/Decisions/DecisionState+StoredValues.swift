import ChorusLog

/// The values the decision state keeps for posts, comments, open reports, follows and likes (the tables:
/// ``DecisionState``).
extension DecisionState {
    /// A post as the state keeps it.
    struct PostState: Equatable {
        let author: UserID
        /// It has an image or reposts a post: an edit may empty its text.
        let textMayBeEmpty: Bool
        let deleted: Bool
        /// The position of its ``PostCreated``.
        let postedAt: LogPosition
        let repostOf: PostID?
        /// Its images' ids, in order: an edit of their alt texts names the same.
        let media: [MediaID]

        init(
            author: UserID, textMayBeEmpty: Bool, deleted: Bool, postedAt: LogPosition, repostOf: PostID?,
            media: [MediaID]
        ) {
            self.author = author
            self.textMayBeEmpty = textMayBeEmpty
            self.deleted = deleted
            self.postedAt = postedAt
            self.repostOf = repostOf
            self.media = media
        }

        init(decoding bytes: UnsafeRawBufferPointer) throws {
            var reader = PayloadReader(Array(bytes))
            author = try reader.read(UserID.self)
            let flags = try reader.readByte()
            (textMayBeEmpty, deleted) = (flags & 1 != 0, flags & 2 != 0)
            postedAt = LogPosition(try reader.readUInt64())
            repostOf = try reader.readOptional(PostID.self)
            media = try (0..<reader.readByte()).map { _ in try reader.read(MediaID.self) }
            try reader.finish()
        }

        func encoded() -> [UInt8] {
            var writer = PayloadWriter()
            writer.write(author)
            writer.write(UInt8((textMayBeEmpty ? 1 : 0) | (deleted ? 2 : 0)))
            writer.write(postedAt.rawValue)
            writer.write(repostOf)
            writer.write(UInt8(media.count))
            for id in media { writer.write(id) }
            return writer.bytes
        }
    }

    /// A comment as the state keeps it.
    struct CommentState: Equatable {
        let post: PostID
        let author: UserID
        /// The position of its ``CommentAdded``.
        let commentedAt: LogPosition
        let deleted: Bool

        init(post: PostID, author: UserID, commentedAt: LogPosition, deleted: Bool) {
            self.post = post
            self.author = author
            self.commentedAt = commentedAt
            self.deleted = deleted
        }

        init(decoding bytes: UnsafeRawBufferPointer) throws {
            var reader = PayloadReader(Array(bytes))
            post = try reader.read(PostID.self)
            author = try reader.read(UserID.self)
            commentedAt = LogPosition(try reader.readUInt64())
            deleted = try reader.readByte() == 1
            try reader.finish()
        }

        func encoded() -> [UInt8] {
            var writer = PayloadWriter()
            writer.write(post)
            writer.write(author)
            writer.write(commentedAt.rawValue)
            writer.write(UInt8(deleted ? 1 : 0))
            return writer.bytes
        }
    }

    /// A report not resolved yet: where it was filed, what it is about, and whom that is by.
    struct OpenReport: Equatable {
        let filedAt: LogPosition
        let target: ReportTarget
        let targetAuthor: UserID

        init(filedAt: LogPosition, target: ReportTarget, targetAuthor: UserID) {
            self.filedAt = filedAt
            self.target = target
            self.targetAuthor = targetAuthor
        }

        init(decoding bytes: UnsafeRawBufferPointer) throws {
            var reader = PayloadReader(Array(bytes))
            filedAt = LogPosition(try reader.readUInt64())
            target = try reader.readReportTarget()
            targetAuthor = try reader.read(UserID.self)
            try reader.finish()
        }

        func encoded() -> [UInt8] {
            var writer = PayloadWriter()
            writer.write(filedAt.rawValue)
            writer.write(target)
            writer.write(targetAuthor)
            return writer.bytes
        }
    }

    /// A follow or a like as the state keeps it.
    struct Edge {
        let exists: Bool
        let since: LogPosition?

        init(_ stored: UnsafeRawBufferPointer?) {
            exists = stored != nil
            since = stored.flatMap {
                $0.count == 8 ? LogPosition(UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self))) : nil
            }
        }
    }
}
