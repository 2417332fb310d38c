import ChorusLog

extension CommandExecutor {
    /// Decides inside the writer's transaction (``Decision``).
    static func decide(
        _ command: PreparedCommand, state: DecisionState, keys: any PersonalDataKeys, in batch: any DecisionBatch
    ) throws -> CommandResult {
        let context = DecisionContext(
            state: state, transaction: batch.state, batch: batch, keys: keys, actor: command.actor)
        return try command.decision.decide(in: context)
    }
}
