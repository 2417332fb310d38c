import ArgumentParser

/// `chorus projections …`: the read models, for operators.
struct ProjectionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "projections",
        abstract: "Show and rebuild the read models of a data directory or a running server.",
        subcommands: [ProjectionsStatusCommand.self, ProjectionsRebuildCommand.self]
    )
}
