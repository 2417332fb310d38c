import ChorusDomain
import ChorusLog

extension ReadView {
    func addChanges(of event: MessageSent, to list: inout LiveChangeList) throws {
        let viewer = list.viewer
        guard event.from == viewer || event.to == viewer,
            let from = try userSummary(event.from), let to = try userSummary(event.to)
        else { return }
        let message = Message(id: event.message, from: from, to: to, text: event.text, createdAt: list.recordedAt)
        let partner = event.from == viewer ? to : from
        if list.topics.contains(.conversation(partner.id)) { list.changes.append(.message(message)) }
        if list.topics.contains(.conversations) {
            list.changes.append(.conversation(try conversation(of: viewer, with: partner, last: message)))
        }
    }

    func addChanges(of event: ConversationRead, to list: inout LiveChangeList) throws {
        guard event.partner == list.viewer, list.topics.contains(.conversations) else { return }
        let upTo = try partnerReadUpTo(of: list.viewer, with: event.reader)
        list.changes.append(.read(partner: event.reader, upTo: upTo))
    }

    /// To members only, as the read models have them.
    func addChanges(of event: RoomMessageSent, to list: inout LiveChangeList) throws {
        guard list.topics.contains(.room(event.room)), try isMember(list.viewer, of: event.room),
            let message = try roomMessage(in: event.room, at: list.position)
        else { return }
        list.changes.append(.roomMessage(message))
    }

    func addChanges(of event: RoomJoined, to list: inout LiveChangeList) throws {
        guard list.topics.contains(.room(event.room)), try isMember(list.viewer, of: event.room) else { return }
        list.changes.append(.room(event.room))
    }

    func addChanges(of event: RoomLeft, to list: inout LiveChangeList) throws {
        guard list.topics.contains(.room(event.room)),
            try event.user == list.viewer || isMember(list.viewer, of: event.room)
        else { return }
        list.changes.append(.room(event.room))
    }
}
