import NIOCore
import PostgresNIO

/// The stored images of a cluster, in PostgreSQL (`chorus_media`): every file of an image, sealed under its uploader's
/// key as a node stores it on disk, so that every node serves every image whichever node took the upload. Nodes keep
/// what they fetch in their own media folders; asked synchronously, through a connection of its own, as the data keys
/// are.
public struct ClusterMediaFiles: Sendable {
    private let database: ClusterDatabase

    public init(database: ClusterDatabase) { self.database = database }

    /// Stores the files of `media` (name and sealed bytes each), uploaded by `owner`; files stored already stay.
    public func put(_ media: String, owner: String, files: [(name: String, bytes: [UInt8])]) throws {
        for file in files {
            _ = try database.mediaConnection.query(
                """
                INSERT INTO chorus_media VALUES (\(media), \(file.name), \(owner), \(ByteBuffer(bytes: file.bytes)))
                ON CONFLICT DO NOTHING
                """)
        }
    }

    /// The uploader and files of `media`; nil when the cluster holds none.
    public func files(of media: String) throws -> (owner: String, files: [(name: String, bytes: [UInt8])])? {
        let rows = try database.mediaConnection.query(
            "SELECT owner, name, bytes FROM chorus_media WHERE media_id = \(media) ORDER BY name")
        var owner: String?
        var files: [(name: String, bytes: [UInt8])] = []
        for row in rows {
            let (uploader, name, bytes) = try row.decode((String, String, ByteBuffer).self)
            owner = uploader
            files.append((name, Array(buffer: bytes)))
        }
        return owner.map { ($0, files) }
    }

    public func remove(_ media: String) throws {
        _ = try database.mediaConnection.query("DELETE FROM chorus_media WHERE media_id = \(media)")
    }

    /// Removes every image `owner` uploaded (their account was deleted).
    public func removeAll(of owner: String) throws {
        _ = try database.mediaConnection.query("DELETE FROM chorus_media WHERE owner = \(owner)")
    }
}
