import ChorusLog

struct SendMessage: Decision {
    let message: MessageSent

    static func prepare(from: UserID, to: UserID, text: String) throws(DomainError) -> PreparedCommand {
        guard from != to else { throw DomainError(.selfMessage, "a user cannot message themselves") }
        let text = try Validate.requiredText(text, field: "message", limit: FieldLimits.message)
        return PreparedCommand(
            caller: from.rawValue, tag: 9,
            fields: {
                $0.write(to)
                $0.write(text)
            }, decision: SendMessage(message: MessageSent(message: .make(), from: from, to: to, text: text)))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        try context.requireUser(message.from)
        try context.requireUser(message.to)
        try context.refuseIfBlocked(message.from, message.to)
        return try context.record(.messageSent(message), created: message.message.rawValue)
    }
}

/// Marks the user's notifications read up to the one made at `upTo`; up to an earlier one changes nothing.
struct ReadNotifications: Decision {
    let user: UserID
    let upTo: LogPosition

    static func prepare(user: UserID, upTo: LogPosition) -> PreparedCommand {
        PreparedCommand(
            caller: user.rawValue, tag: 33, fields: { $0.write(Int64(bitPattern: upTo.rawValue)) },
            decision: ReadNotifications(user: user, upTo: upTo))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        try context.requireUser(user)
        guard upTo <= context.batch.head else {
            throw DomainError(.invalidField, "upTo: no notification at position \(upTo) yet")
        }
        if let read = try context.state.notificationsRead(by: user, in: context.transaction), read >= upTo {
            return context.unchanged
        }
        return try context.record(.notificationsRead(NotificationsRead(user: user, upTo: upTo)))
    }
}

/// Marks a conversation read up to now; with nothing new since the last time, nothing changes.
struct ReadConversation: Decision {
    let reader: UserID
    let partner: UserID

    static func prepare(reader: UserID, partner: UserID) -> PreparedCommand {
        PreparedCommand(
            caller: reader.rawValue, tag: 34, fields: { $0.write(partner) },
            decision: ReadConversation(reader: reader, partner: partner))
    }

    func decide(in context: DecisionContext) throws -> CommandResult {
        try context.requireUser(reader)
        try context.requireUser(partner)
        guard try !context.state.hasReadConversation(reader, with: partner, in: context.transaction) else {
            return context.unchanged
        }
        return try context.record(.conversationRead(ConversationRead(reader: reader, partner: partner)))
    }
}
