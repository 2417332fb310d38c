/// How long a test waits for read models to apply a position they must reach. Every test of the suite starts at once
/// on two cores, and a server's first write has waited 12–15 s there: far past that, so that only read models that
/// never get there fail a test.
public let readModelsWait: Duration = .seconds(60)
