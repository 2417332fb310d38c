/// URL-safe base64 without padding (RFC 4648 §5): for tokens and cursors that travel in URLs and headers. Written
/// out by hand because every request decodes a token and most encode a cursor, and Foundation's detour through
/// standard base64 and string replacement cost more than the HMAC that checks the token.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let values: [UInt8] = {
        var values = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in alphabet.enumerated() { values[Int(character)] = UInt8(value) }
        return values
    }()

    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let bytes = Array(bytes)
        var text: [UInt8] = []
        text.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= bytes.count {
            let group = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            for shift in [18, 12, 6, 0] { text.append(alphabet[Int(group >> UInt32(shift) & 63)]) }
            index += 3
        }
        switch bytes.count - index {
        case 1:
            let group = UInt32(bytes[index]) << 16
            for shift in [18, 12] { text.append(alphabet[Int(group >> UInt32(shift) & 63)]) }
        case 2:
            let group = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
            for shift in [18, 12, 6] { text.append(alphabet[Int(group >> UInt32(shift) & 63)]) }
        default:
            break
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The bytes of `text`; nil when it holds anything but the URL-safe alphabet (padding included) or cannot be
    /// base64 (a length of 4n + 1, or stray bits in its last character).
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count % 4 != 1 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(characters.count * 3 / 4)
        var group: UInt32 = 0
        var bits = 0
        for character in characters {
            let value = values[Int(character)]
            guard value != 0xFF else { return nil }
            group = group << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(truncatingIfNeeded: group >> UInt32(bits)))
                group &= (1 << UInt32(bits)) - 1
            }
        }
        // What is left over must be zero bits, or two texts would decode to the same bytes.
        guard group == 0 else { return nil }
        return bytes
    }
}
