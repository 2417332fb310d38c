import ChorusLog
import ChorusProjections
import ChorusStorage

/// Every entry of every read-model table, in key order, as stored.
package func dumpReadModels(_ store: KeyValueStore) throws -> [String: [[UInt8]]] {
    try store.read { transaction in
        var tables: [String: [[UInt8]]] = [:]
        for table in ProjectionEngine.tables {
            var entries: [[UInt8]] = []
            try transaction.scan(store.table(table)) { key, value in
                entries.append(Array(key) + [0xFF, 0xFE] + Array(value))
                return true
            }
            tables[table.name] = entries
        }
        return tables
    }
}

public func dumpReadModels(atDirectory directory: String) throws -> [String: [[UInt8]]] {
    var configuration = KeyValueStoreConfiguration()
    configuration.readOnly = true
    let store = try KeyValueStore(directory: directory, tables: ProjectionEngine.tables, configuration: configuration)
    defer { store.close() }
    return try dumpReadModels(store)
}
