import CLMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An LMDB failure: every return code of the C API becomes one of these, in ``check(_:_:file:line:)``.
package struct LMDBError: Error, Sendable, CustomStringConvertible {
    /// The LMDB or `errno` return code, with a name for the ones Chorus reacts to.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        package let rawValue: Int32

        package init(_ rawValue: Int32) { self.rawValue = rawValue }

        package static let notFound = Code(MDB_NOTFOUND)
        package static let keyExists = Code(MDB_KEYEXIST)
        package static let mapFull = Code(MDB_MAP_FULL)
        package static let mapResized = Code(MDB_MAP_RESIZED)
        package static let readersFull = Code(MDB_READERS_FULL)
        package static let transactionFull = Code(MDB_TXN_FULL)
        package static let corrupted = Code(MDB_CORRUPTED)
        package static let panic = Code(MDB_PANIC)
        package static let versionMismatch = Code(MDB_VERSION_MISMATCH)
        package static let invalid = Code(MDB_INVALID)
        package static let badValueSize = Code(MDB_BAD_VALSIZE)
        package static let noSpace = Code(ENOSPC)
        package static let noMemory = Code(ENOMEM)
        package static let accessDenied = Code(EACCES)
        package static let noSuchFile = Code(ENOENT)
        /// Not LMDB's: the environment was closed by Chorus before this call.
        package static let environmentClosed = Code(-1)

        package var description: String {
            switch self {
            case .notFound: "MDB_NOTFOUND"
            case .keyExists: "MDB_KEYEXIST"
            case .mapFull: "MDB_MAP_FULL"
            case .mapResized: "MDB_MAP_RESIZED"
            case .readersFull: "MDB_READERS_FULL"
            case .transactionFull: "MDB_TXN_FULL"
            case .corrupted: "MDB_CORRUPTED"
            case .panic: "MDB_PANIC"
            case .versionMismatch: "MDB_VERSION_MISMATCH"
            case .invalid: "MDB_INVALID"
            case .badValueSize: "MDB_BAD_VALSIZE"
            case .noSpace: "ENOSPC"
            case .noMemory: "ENOMEM"
            case .accessDenied: "EACCES"
            case .noSuchFile: "ENOENT"
            case .environmentClosed: "environment closed"
            default: "code \(rawValue)"
            }
        }
    }

    /// What went wrong.
    package let code: Code
    /// LMDB's own sentence for the code.
    package let message: String
    /// The call that failed and on what, for example `mdb_put(events)`.
    package let operation: String
    /// Where in Chorus the call was made.
    package let location: String

    package var description: String {
        "LMDB error \(code) in \(operation): \(message) (at \(location))"
    }

    /// Returns normally for `MDB_SUCCESS`; throws the translated error for any other code.
    @inline(__always)
    package static func check(
        _ returnCode: Int32,
        _ operation: @autoclosure () -> String,
        file: StaticString = #fileID,
        line: UInt = #line
    ) throws(LMDBError) {
        guard returnCode != MDB_SUCCESS else { return }
        throw LMDBError(returnCode, operation(), file: file, line: line)
    }

    package init(_ returnCode: Int32, _ operation: String, file: StaticString = #fileID, line: UInt = #line) {
        self.init(Code(returnCode), String(cString: mdb_strerror(returnCode)), operation, file: file, line: line)
    }

    private init(_ code: Code, _ message: String, _ operation: String, file: StaticString, line: UInt) {
        self.code = code
        self.message = message
        self.operation = operation
        self.location = "\(file):\(line)"
    }

    package static func environmentClosed(_ path: String, file: StaticString = #fileID, line: UInt = #line) -> LMDBError
    {
        LMDBError(.environmentClosed, "the environment was closed", "transaction on \(path)", file: file, line: line)
    }
}
