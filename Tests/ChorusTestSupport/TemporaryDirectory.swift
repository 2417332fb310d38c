import Foundation

/// Runs `body` with a fresh, empty directory that is removed afterwards.
public func withTemporaryDirectory<R>(_ body: (String) async throws -> R) async throws -> R {
    let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("chorus-test-\(UUID().uuidString.lowercased())").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try await body(path)
}
