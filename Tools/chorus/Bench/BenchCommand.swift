import ArgumentParser

struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure Chorus on this machine; build with -c release for figures that mean anything.",
        subcommands: [
            LogBenchCommand.self, ProjectionsBenchCommand.self, APIBenchCommand.self, SoakBenchCommand.self,
            DeleteBenchCommand.self, ErasureBenchCommand.self, ClusterBenchCommand.self, FanOutBenchCommand.self,
            PostgresBenchCommand.self, DayBenchCommand.self, MediaBenchCommand.self, PushBenchCommand.self,
            ConsoleBenchCommand.self, RebuildWorkerCommand.self,
        ]
    )
}

/// Options every benchmark shares.
struct BenchOutputOptions: ParsableArguments {
    @Flag(help: "After the table, print the figures as one JSON object on the last line.")
    var json = false

    @Option(help: "Where to put the benchmark's temporary files (on the disk you want measured).")
    var workDirectory: String?
}
