/// A table of a ``KeyValueStore``: its name. Each key holds one value.
public struct StoreTableDefinition: Sendable, Hashable, ExpressibleByStringLiteral {
    public let name: String

    public init(_ name: String) {
        precondition(!name.isEmpty, "a table needs a name")
        self.name = name
    }

    public init(stringLiteral name: String) { self.init(name) }

    var lmdbDefinition: LMDBEnvironment.DatabaseDefinition { .init(name: name) }
}
