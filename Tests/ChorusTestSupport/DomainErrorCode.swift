import ChorusDomain

/// The error `body` throws, as a DomainError code.
public func domainErrorCode(_ body: () async throws -> Void) async -> DomainError.Code? {
    do {
        try await body()
        return nil
    } catch let error as DomainError {
        return error.code
    } catch {
        return nil
    }
}
