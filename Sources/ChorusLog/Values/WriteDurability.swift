/// Whether an append is answered only once it is durable.
public enum WriteDurability: Sendable, Hashable {
    /// The default: answered only once the commit is on disk.
    case durable
    /// For bulk import only: answered once committed, made durable by ``EventLog/syncToDisk()`` or a later durable
    /// commit. A crash may lose it.
    case nonDurableBulkImport
}
