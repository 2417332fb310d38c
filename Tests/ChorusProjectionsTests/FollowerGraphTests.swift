import ChorusDemo
import Testing

@Suite("Demo follower graphs")
struct FollowerGraphTests {
    @Test("zipf at the 1M-event size: three accounts with over 100,000 followers, most with none, the same for a seed")
    func zipfAtScale() throws {
        let graph = FollowerGraph.zipf
        let users = graph.userCount(events: 1_000_000)
        #expect(users == 125_000)
        var generator = SeededGenerator(seed: 1)
        let follows = graph.follows(among: users, using: &generator)
        var followers = [Int](repeating: 0, count: users)
        var edges = Set<Int>()
        for (follower, followee) in follows {
            #expect(follower != followee)
            followers[followee] += 1
            edges.insert(follower * users + followee)
        }
        #expect(edges.count == follows.count, "no follow twice")
        let ranked = followers.sorted(by: >)
        #expect(ranked.prefix(3).allSatisfy { $0 >= 100_000 }, "\(ranked.prefix(5))")
        #expect(ranked[3] < 100_000 && ranked[10] < 10_000, "then a tail: \(ranked.prefix(12))")
        #expect(followers.filter { $0 == 0 }.count > users / 2, "most accounts start with no follower")
        #expect(follows.count < 5 * users, "about 4.7 follows per user: \(follows.count)")

        var again = SeededGenerator(seed: 1)
        #expect(graph.follows(among: users, using: &again).elementsEqual(follows, by: ==), "deterministic by seed")
        var other = SeededGenerator(seed: 2)
        #expect(!graph.follows(among: users, using: &other).elementsEqual(follows, by: ==))
    }
}
