/// A command refused, with the error code of the HTTP contract (openapi.yaml) and a sentence for a person. Nothing was
/// appended.
public struct DomainError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The contract's error codes for refused commands; the HTTP status is the API's business.
    public enum Code: String, Sendable, Hashable {
        case invalidEmail = "invalid_email"
        case weakPassword = "weak_password"
        case invalidField = "invalid_field"
        case emptyText = "empty_text"
        case textTooLong = "text_too_long"
        case unknownUser = "unknown_user"
        case unknownPost = "unknown_post"
        case unknownMedia = "unknown_media"
        case selfFollow = "self_follow"
        case selfMessage = "self_message"
        case emailTaken = "email_taken"
        /// Another account has the handle.
        case handleTaken = "handle_taken"
        /// Not `[a-z0-9_]{3,30}`.
        case invalidHandle = "invalid_handle"
        case idempotencyConflict = "idempotency_conflict"
        case invalidCredentials = "invalid_credentials"
        /// The current password given to change it is not the user's.
        case wrongPassword = "wrong_password"
        /// A password-reset token that is unknown, used or expired.
        case invalidToken = "invalid_token"
        /// The user may not do this to that thing (edit another's post).
        case forbidden
        /// A thing named in the path that is not there (a comment under a post).
        case notFound = "not_found"
        /// The thing was there and was deleted (a write on a deleted post).
        case gone
        /// One of the two users blocked the other.
        case blocked
        /// The account is suspended: it cannot sign in.
        case suspended
        /// The post's author lets only some users comment (``ReplyPolicy``), and the caller is not one of them.
        case repliesRestricted = "replies_restricted"
        /// The account is private and the caller does not follow it: its posts, tabs and lists are not theirs to see.
        case privateAccount = "private_account"
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
