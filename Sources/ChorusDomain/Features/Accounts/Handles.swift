import ChorusLog
import Crypto

/// Handles: the unique `@name` of an account, `[a-z0-9_]{3,30}`, compared without case (a handle is kept lowercase).
public enum Handles {
    public static let lengths = 3...30

    /// `typed` as a handle, lowercased; ``DomainError/Code/invalidHandle`` for anything else.
    public static func validated(_ typed: String) throws(DomainError) -> String {
        let handle = typed.lowercased()
        guard lengths.contains(handle.utf8.count), handle.utf8.allSatisfy(isHandleByte) else {
            throw DomainError(
                .invalidHandle, "handle: \(lengths.lowerBound) to \(lengths.upperBound) of a-z, 0-9 and _")
        }
        return handle
    }

    static func isHandleByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || byte == UInt8(ascii: "_")
    }

    /// The key a handle is unique under in the decision state: a SHA-256 of it, in hex, so that the state never holds
    /// the handle of an account deleted since, as it never holds an e-mail (``Validate/emailKey(_:)``).
    static func key(_ handle: String) -> String {
        var hasher = SHA256()
        hasher.update(data: Array("chorus handle\u{0}".utf8))
        hasher.update(data: Array(handle.utf8))
        return Validate.hex(hasher.finalize())
    }

    /// The handle of an account registered before handles existed (``UserRegistered`` before schema version 3): made
    /// from its id alone, so that every fold of the log gives it the same one, even after the account's name is
    /// erased, and no two accounts share one. Its owner can change it.
    static func ofEarlierAccount(_ user: UserID) -> String { "u_" + user.rawValue }

    /// The handles a new account without one of its own may get, best first: its name's ASCII letters and digits (a
    /// name with none is `user`), then the same with more and more of its id's last digits (random bits of its
    /// UUIDv7), ending with the id whole. A name too short for a handle alone starts with its digits.
    static func candidates(name: String, user: UserID) -> [String] {
        var base = ""
        for scalar in name.lowercased().unicodeScalars {
            if scalar.isASCII, isHandleByte(UInt8(scalar.value)), scalar != "_" {
                base.unicodeScalars.append(scalar)
            } else if !base.isEmpty, base.last != "_" {
                base += "_"
            }
        }
        while base.last == "_" { base.removeLast() }
        if base.isEmpty { base = "user" }
        let id = user.rawValue
        let suffixed = [4, 6, 8, 12].map { digits in
            String(base.prefix(lengths.upperBound - 1 - digits)) + "_" + id.suffix(digits)
        }
        let alone = base.utf8.count >= lengths.lowerBound ? [String(base.prefix(lengths.upperBound))] : []
        return alone + suffixed + [ofEarlierAccount(user)]
    }
}

/// What the decisions of handles read in the state (the tables `handles` and `user-handles`).
extension DecisionState {
    /// The account whose handle `handle` is now; nil when it is free (never taken, changed since, or its account
    /// deleted).
    func user(withHandle handle: String, in state: some StateReader) throws -> UserID? {
        let key = Handles.key(handle)
        guard
            let user = try state.value(for: Self.key(key), in: handles).map({
                UserID(unchecked: String(decoding: $0, as: UTF8.self))
            }), try exists(user, in: state),
            try state.value(for: Self.key(user.rawValue), in: userHandles) == Array(key.utf8)
        else { return nil }
        return user
    }

    /// The first of `candidates` no account has now.
    func firstFree(of candidates: [String], in state: some StateReader) throws -> String? {
        for candidate in candidates {
            if try user(withHandle: candidate, in: state) == nil { return candidate }
        }
        return nil
    }

    /// Throws ``DomainError/Code/handleTaken`` when an account other than `user` has `handle`.
    func requireFree(_ handle: String, for user: UserID, in state: some StateReader) throws {
        if let holder = try self.user(withHandle: handle, in: state), holder != user {
            throw DomainError(.handleTaken, "@\(handle) is taken")
        }
    }

    /// The changes of `user` having `handle` now; none for the empty handle of an erased account's events.
    static func putHandle(_ handle: String, of user: UserID, in state: DecisionState, _ changes: inout ChangeList) {
        guard !handle.isEmpty else { return }
        let key = Handles.key(handle)
        changes.put(state.handles, .init(key), text: user.rawValue)
        changes.put(state.userHandles, .init(user.rawValue), text: key)
    }
}
