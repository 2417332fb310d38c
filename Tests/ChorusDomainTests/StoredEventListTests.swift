import Testing

@testable import ChorusDomain

/// `DomainEvent.storedTypes` is what decoding finds a stored name in: an event left out of it encodes but never
/// decodes.
@Suite("Domain events: the list of stored types")
struct StoredEventListTests {
    @Test("every stored type has a sample that round-trips, every sample's type is listed, and no name is listed twice")
    func listMatchesTheSamples() {
        let listed = DomainEvent.storedTypes.map { $0.typeName }
        #expect(Set(listed).count == listed.count, "a name listed twice: \(listed)")
        let sampled = Set(DomainEventCodingTests.samples.map(\.typeName))
        #expect(
            Set(listed) == sampled,
            "listed but not sampled, or the reverse: \(Set(listed).symmetricDifference(sampled))")
    }
}
