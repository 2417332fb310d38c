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
        let box = try AES.GCM.seal(
            writer.bytes, using: try keys.makeKey(for: owner), authenticating: context(owner, type))
        guard let combined = box.combined else { throw PayloadError.unreadableSealedFields }
        return Array(combined)
    }

    /// A reader of the sealed fields; nil once the owner's key is destroyed (the account was erased).
    static func open(_ sealed: [UInt8], owner: UserID, type: String, keys: any PersonalDataKeys) throws
        -> PayloadReader?
    {
        guard let key = try keys.key(of: owner) else { return nil }
        do {
            let box = try AES.GCM.SealedBox(combined: sealed)
            return PayloadReader(Array(try AES.GCM.open(box, using: key, authenticating: context(owner, type))))
        } catch {
            throw PayloadError.unreadableSealedFields
        }
    }

    /// The type, NUL and the owner's id.
    private static func context(_ owner: UserID, _ type: String) -> [UInt8] { [UInt8](type, nulThen: owner.rawValue) }
}
