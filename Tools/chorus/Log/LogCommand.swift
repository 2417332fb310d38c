import ArgumentParser

/// `chorus log …`: the event log itself, for operators.
struct LogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "Verify, export, import and back up the event log of a data directory.",
        subcommands: [LogVerifyCommand.self, LogExportCommand.self, LogImportCommand.self, LogBackupCommand.self]
    )
}
