import ServiceLifecycle

/// Runs `body` while `services` run, then cancels them, as a stopping server does, and waits until they have stopped.
func whileRunning<R>(_ services: [any Service], _ body: () async throws -> R) async throws -> R {
    try await withThrowingTaskGroup(of: Void.self, returning: R.self) { group in
        for service in services { group.addTask { try await service.run() } }
        defer { group.cancelAll() }
        return try await body()
    }
}
