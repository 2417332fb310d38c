import ChorusDomain

/// A media id's bytes (26) as four words: a key for what is kept per image, made from an id read in place without a
/// string.
public struct MediaKey: Hashable, Sendable {
    private let a, b, c, d: UInt64

    /// Nil past 32 bytes, which no id has.
    public init?(_ utf8: UnsafeRawBufferPointer) {
        guard utf8.count <= 32 else { return nil }
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: utf8) }
        (a, b, c, d) = words
    }

    public init(_ media: MediaID) {
        var text = media.rawValue
        let key = text.withUTF8 { MediaKey(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer($0).prefix(32))) }
        (a, b, c, d) = (key?.a ?? 0, key?.b ?? 0, key?.c ?? 0, key?.d ?? 0)
    }
}
