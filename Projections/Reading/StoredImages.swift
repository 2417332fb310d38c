import ChorusDomain

/// A post's images as its record stores them: a count byte, then each image's id and alt text (optional) in
/// ``ChorusDomain/PayloadWriter``'s form. Read in place like ``StoredText``, and only ever lent.
public struct StoredImages: ~Copyable {
    /// Checked by ``checked(_:)`` when the record was read.
    private let bytes: UnsafeRawBufferPointer

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    public var count: Int { bytes.isEmpty ? 0 : Int(bytes[0]) }

    public var isEmpty: Bool { count == 0 }

    /// Calls `body` with each image's id and alt text (nil when there is none), in the post's order.
    public func forEachImage(_ body: (borrowing StoredText, borrowing StoredText?) throws -> Void) rethrows {
        var cursor = PayloadCursor(bytes, offset: 1)
        for _ in 0..<count {
            // Checked already: neither read fails.
            guard let id = try? cursor.readUTF8(), let hasAlt = try? cursor.readByte() else { return }
            if hasAlt == 1, let alt = try? cursor.readUTF8() {
                try body(StoredText(id), StoredText(alt))
            } else {
                try body(StoredText(id), nil)
            }
        }
    }

    /// `body` called with the first image's id; nil when there is none.
    public func withFirstID<R>(_ body: (borrowing StoredText) throws -> R) rethrows -> R? {
        var cursor = PayloadCursor(bytes, offset: 1)
        guard count > 0, let id = try? cursor.readUTF8() else { return nil }
        return try body(StoredText(id))
    }

    /// Copies of the images.
    func copies() -> [PostImage] {
        var media: [PostImage] = []
        forEachImage { id, alt in
            let alt: String? =
                switch alt {
                case .some(let text): text.string
                case .none: nil
                }
            media.append(PostImage(id: MediaID(unchecked: id.string), alt: alt))
        }
        return media
    }

    static func encoded(_ media: [PostImage]) -> [UInt8] {
        guard !media.isEmpty else { return [] }
        var writer = PayloadWriter()
        writer.write(UInt8(media.count))
        for image in media {
            writer.write(image.id)
            writer.write(image.alt)
        }
        return writer.bytes
    }

    /// `bytes`, once every image in them reads.
    static func checked(_ bytes: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer {
        guard !bytes.isEmpty else { return bytes }
        var cursor = PayloadCursor(bytes, offset: 1)
        for _ in 0..<bytes[0] {
            _ = try cursor.readUTF8()
            _ = try cursor.readOptionalUTF8()
        }
        try cursor.finish()
        return bytes
    }
}
