import Foundation

/// Who follows whom when a demo's users have signed up, before everyday life starts (which adds and takes back
/// follows of its own).
public enum FollowerGraph: String, Sendable, CaseIterable {
    /// Each user follows 2 to 8 others, favouring the first accounts: a few are followed by thousands. One user per
    /// 40 events.
    case modest
    /// Zipf-like, as on Twitter: the first three accounts are followed by over 80 % of users, the followers of the
    /// next fall with the square of their rank, and most accounts start with none. One user per 8 events: at
    /// 1,000,000 events, 125,000 users, three of them with over 100,000 followers.
    case zipf

    /// How many users a demo of about `events` events signs up.
    public func userCount(events: Int) -> Int {
        switch self {
        case .modest: max(8, events / 40)
        case .zipf: max(8, events / 8)
        }
    }

    /// The follows among `count` users, as indexes of follower and followee, in the order they are made; no user
    /// follows themself (a follow made twice is refused as unchanged, as it is in life).
    public func follows(among count: Int, using generator: inout SeededGenerator) -> [(follower: Int, followee: Int)] {
        switch self {
        case .modest:
            var follows: [(follower: Int, followee: Int)] = []
            for follower in 0..<count {
                for _ in 0..<Int.random(in: 2...8, using: &generator) {
                    let followee = generator.skewedIndex(below: count)
                    guard followee != follower else { continue }
                    follows.append((follower, followee))
                }
            }
            return follows
        case .zipf:
            var follows: [(follower: Int, followee: Int)] = []
            for followee in 0..<count {
                let target = Self.zipfFollowers(rank: followee + 1, users: count, using: &generator)
                guard target > 0 else { continue }
                if target >= count / 8 {
                    // Most users: each one decides.
                    let share = Double(target) / Double(count)
                    for follower in 0..<count
                    where follower != followee && Double.random(in: 0..<1, using: &generator) < share {
                        follows.append((follower, followee))
                    }
                } else {
                    var followers: Set<Int> = []
                    while followers.count < min(target, count - 1) {
                        let follower = Int.random(in: 0..<count, using: &generator)
                        if follower != followee, followers.insert(follower).inserted {
                            follows.append((follower, followee))
                        }
                    }
                }
            }
            // Follows come in any order, as in life: a popular account crosses any threshold part-way.
            follows.shuffle(using: &generator)
            return follows
        }
    }

    /// The followers of the account of `rank` (from 1) among `users`: 92 % of users times rank^-0.1 for the first
    /// three, then the third's times (3 / rank)², the fraction drawn at random.
    static func zipfFollowers(rank: Int, users: Int, using generator: inout SeededGenerator) -> Int {
        let head = 0.92 * Double(users)
        let followers =
            rank <= 3 ? head * pow(Double(rank), -0.1) : head * pow(3, -0.1) * pow(3 / Double(rank), 2)
        let whole = followers.rounded(.down)
        return Int(whole) + (Double.random(in: 0..<1, using: &generator) < followers - whole ? 1 : 0)
    }
}
