import ChorusLog

/// Signs up, and signs the new user in.
struct RegisterUser: Decision {
    let registered: UserRegistered
    let session: SessionStarted

    /// The handle asked for; nil: the first free of the name's (``Handles/candidates(name:user:)``).
    let handle: String?

    static func prepare(
        email: String, password: String, name: String, major: String?, bio: String?, handle: String?,
        _ context: CommandPreparation
    ) throws(DomainError) -> PreparedCommand {
        let email = try Validate.email(email)
        try Validate.password(password)
        let handle = try handle.map { (handle) throws(DomainError) in try Handles.validated(handle) }
        var user = UserRegistered(
            user: .make(), email: email, passwordHash: "", name: try Validate.name(name),
            major: try Validate.profileField(major, field: "major", limit: FieldLimits.major, layout: .line),
            bio: try Validate.profileField(bio, field: "bio", limit: FieldLimits.bio, layout: .paragraphs), handle: "")
        // A handle asked for is part of the request; none asked for adds nothing, as before handles.
        let fields = [user.email, user.name, user.major, user.bio] + (handle.map { [$0] } ?? [])
        user.passwordHash = context.hasher.hash(password)
        let session = SessionStarted(session: .make(), user: user.user, expiresAt: context.sessionEnd)
        return PreparedCommand(
            caller: Validate.emailKey(email), actor: user.user.rawValue, tag: 1,
            fields: { for field in fields { $0.write(field) } },
            decision: RegisterUser(registered: user, session: session, handle: handle))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        var registered = self.registered
        let emailKey = Validate.emailKey(registered.email)
        guard try context.state.user(withEmailKey: emailKey, in: context.transaction) == nil else {
            throw DomainError(.emailTaken, "\(registered.email) is already registered")
        }
        if let handle {
            try context.state.requireFree(handle, for: registered.user, in: context.transaction)
            registered.handle = handle
        } else {
            let candidates = Handles.candidates(name: registered.name, user: registered.user)
            // The last candidate holds the whole id, which only this account's could be made of.
            registered.handle =
                try context.state.firstFree(of: candidates, in: context.transaction) ?? candidates[candidates.count - 1]
        }
        return try context.record(
            .userRegistered(registered), .sessionStarted(session), created: registered.user.rawValue, session: session)
    }
}

struct EditProfile: Decision {
    let edit: ProfileEdited
    let catalog: any MediaCatalog

    static func prepare(
        user: UserID, name: String?, major: String?, bio: String?, image: ProfileImageChange?, handle: String?,
        isPrivate: Bool?, _ context: CommandPreparation
    ) throws(DomainError) -> PreparedCommand {
        if case .set(let image)? = image, !context.media.contains(image, uploadedBy: user) {
            throw DomainError(.unknownMedia, "no media \(image) uploaded by the user")
        }
        let edit = ProfileEdited(
            user: user, name: try name.map(Validate.name),
            major: try major.map { (text) throws(DomainError) in
                try Validate.profileField(text, field: "major", limit: FieldLimits.major, layout: .line)
            },
            bio: try bio.map { (text) throws(DomainError) in
                try Validate.profileField(text, field: "bio", limit: FieldLimits.bio, layout: .paragraphs)
            },
            profileImage: image,
            handle: try handle.map { (handle) throws(DomainError) in try Handles.validated(handle) },
            isPrivate: isPrivate)
        return PreparedCommand(
            caller: user.rawValue, tag: 2,
            fields: {
                $0.write(edit.name)
                $0.write(edit.major)
                $0.write(edit.bio)
                switch image {
                case nil: $0.write(UInt8(0))
                case .remove?: $0.write(UInt8(1))
                case .set(let image)?: $0.write(image.rawValue)
                }
                if let handle = edit.handle { $0.write(handle) }
                if let isPrivate { $0.write(UInt8(isPrivate ? 1 : 2)) }
            }, decision: EditProfile(edit: edit, catalog: context.media))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        try context.requireUser(edit.user)
        // Asked again in the writer, as ``CreatePost`` does.
        if case .set(let image)? = edit.profileImage, !catalog.contains(image, uploadedBy: edit.user) {
            throw DomainError(.unknownMedia, "no media \(image) uploaded by the user")
        }
        if let handle = edit.handle { try context.state.requireFree(handle, for: edit.user, in: context.transaction) }
        var edit = self.edit
        let wasPrivate = try context.state.isPrivate(edit.user, in: context.transaction)
        // Recorded only when it changes: a public account keeps no privacy of its own to erase.
        if edit.isPrivate == wasPrivate { edit.isPrivate = nil }
        guard edit.isPrivate == false else { return try context.record(.profileEdited(edit)) }
        // Turned public: every pending request is accepted with it.
        let accepted = try context.state.followRequests(to: edit.user, in: context.transaction).map { follower, since in
            DomainEvent.followed(Followed(follower: follower, followee: edit.user, requestedAt: since))
        }
        return try context.recordEach([.profileEdited(edit)] + accepted)
    }
}

/// Deletes the account, with everything it wrote and every relation it had (``AccountDeleted``).
struct DeleteAccount: Decision {
    let user: UserID
    /// The stored hash the password was checked against, outside the writer (filled in by the executor).
    var checkedHash = ""

    static func prepare(user: UserID) -> PreparedCommand {
        PreparedCommand(caller: user.rawValue, tag: 25, decision: DeleteAccount(user: user))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        // A password change that came in after the check makes it stale.
        guard try context.state.passwordHash(of: user, in: context.transaction) == checkedHash else {
            throw DomainError(.wrongPassword, "the password changed meanwhile")
        }
        let deletions: [DomainEvent] = try context.state.erasure(of: user, in: context.transaction)
        try context.state.forgetRequests(byEmailOf: user, in: context.transaction)
        return try context.recordEach(deletions)
    }
}

/// The server records that nothing readable of a deleted account's personal data is left in its files.
struct CompleteErasure: Decision {
    let user: UserID

    static func prepare(user: UserID) -> PreparedCommand {
        PreparedCommand(
            caller: Command.adminActor, tag: 26, fields: { $0.write(user) }, decision: CompleteErasure(user: user))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        guard let erasure = try context.state.erasure(of: user, in: context.transaction), erasure.completedAt == nil
        else { return context.unchanged }
        return try context.record(.erasureCompleted(ErasureCompleted(user: user)))
    }
}
