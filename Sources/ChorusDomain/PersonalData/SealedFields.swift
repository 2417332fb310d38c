import ChorusLog
import Crypto

/// A user's personal fields in an event's payload, sealed under their data key (``PersonalDataKeys``): the fields in
/// ``PayloadWriter``'s form, encrypted and authenticated with AES-GCM, stored as the box's nonce, ciphertext and tag.
/// The event's type and the owner's id are authenticated with it, so a sealed section cannot be moved to another event
/// or user. Once the owner's key is destroyed, nobody can read it again: the event keeps its place, ids and checksum.
enum SealedFields {
    /// Seals what `fields` writes under `owner`'s key (made now if the owner has none yet).
    static func seal(
        owner: UserID, type: String, keys: any PersonalDataKeys, _ fields: (inout PayloadWriter) -> Void
    ) throws -> [UInt8] {
        var writer = PayloadWriter()
        fields(&writer)
        let key = try keys.makeKey(for: owner)
        let box = try withContext(owner, type) { try AES.GCM.seal(writer.bytes, using: key, authenticating: $0) }
        guard let combined = box.combined else { throw PayloadError.unreadableSealedFields }
        return Array(combined)
    }

    /// A reader of the sealed fields; nil once the owner's key is destroyed (the account was erased).
    static func open(_ sealed: UnsafeRawBufferPointer, owner: UserID, type: String, keys: any PersonalDataKeys) throws
        -> PayloadReader?
    {
        guard let key = try keys.key(of: owner) else { return nil }
        do {
            let box = try AES.GCM.SealedBox(combined: sealed)
            return PayloadReader(
                Array(try withContext(owner, type) { try AES.GCM.open(box, using: key, authenticating: $0) }))
        } catch {
            throw PayloadError.unreadableSealedFields
        }
    }

    /// Lends `body` the authenticated context: the type, NUL and the owner's id. On the stack: an import opens a
    /// quarter of a million sealed sections. Copied from the strings' UTF-8 views in one closure: a closure for each
    /// string's bytes copied the box and retained the key at every level.
    private static func withContext<R>(_ owner: UserID, _ type: String, _ body: (UnsafeRawBufferPointer) throws -> R)
        rethrows -> R
    {
        let (type, owner) = (type.utf8, owner.rawValue.utf8)
        return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: type.count + 1 + owner.count) { context in
            let separator = context.initialize(fromContentsOf: type)
            context[separator] = 0
            _ = context[(separator + 1)...].initialize(fromContentsOf: owner)
            return try body(UnsafeRawBufferPointer(context))
        }
    }
}
