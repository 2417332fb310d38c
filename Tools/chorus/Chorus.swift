import ArgumentParser

@main
struct Chorus: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chorus",
        abstract: "Chorus: an event-sourced backend for social apps.",
        subcommands: [
            ServeCommand.self, DemoCommand.self, ReplayCommand.self, LogCommand.self, ProjectionsCommand.self,
            BenchCommand.self, ClusterCommand.self, ImageWorkerCommand.self,
        ]
    )
}
