import ChorusBackend
import Synchronization

/// The JSON members of each image shown in posts since start, but its alt text: an image's never change. At most
/// ``limit`` are kept (each a few hundred bytes); past it, they are made anew.
final class ImageMembers: Sendable {
    static let limit = 65_536
    private let kept = Mutex<[MediaKey: [UInt8]]>([:])

    /// The members of the image whose id is `utf8`, made by `make` unless kept; kept if `make` says they last.
    func members(of utf8: UnsafeRawBufferPointer, _ make: () -> (members: [UInt8], lasting: Bool)) -> [UInt8] {
        guard let key = MediaKey(utf8) else { return make().members }
        if let members = kept.withLock({ $0[key] }) { return members }
        let (members, lasting) = make()
        guard lasting else { return members }
        kept.withLock { kept in
            if kept.count >= Self.limit { kept.removeAll(keepingCapacity: true) }
            kept[key] = members
        }
        return members
    }
}
