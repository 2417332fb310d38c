import ChorusLog

/// A one-event append with a recognisable payload.
func tick(
    _ stream: StreamID, _ text: String = "tick", expected: ExpectedVersion = .any, command: CommandID = CommandID()
) -> AppendRequest {
    AppendRequest(
        stream: stream, expectedVersion: expected,
        events: [NewEvent(type: "Tick", payload: Array(text.utf8))], commandID: command, actor: "tester")
}

extension RecordedEvent {
    var text: String { String(decoding: payload, as: UTF8.self) }
}
