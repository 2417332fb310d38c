import ArgumentParser

@main
struct Chorus: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chorus",
        abstract: "Chorus: an event-sourced backend for social apps.",
        subcommands: [DemoCommand.self, BenchCommand.self]
    )
}
