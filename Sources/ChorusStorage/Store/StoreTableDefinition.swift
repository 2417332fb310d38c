/// A table of a ``KeyValueStore``: its name. Each key holds one value.
package struct StoreTableDefinition: Sendable, Hashable, ExpressibleByStringLiteral {
    package let name: String

    package init(_ name: String) {
        precondition(!name.isEmpty, "a table needs a name")
        self.name = name
    }

    package init(stringLiteral name: String) { self.init(name) }

    package var lmdbDefinition: LMDBEnvironment.DatabaseDefinition { .init(name: name) }
}
