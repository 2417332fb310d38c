import Foundation

/// SplitMix64: a small, fast, seeded generator, so that a seed always produces the same workload.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// An index in `0..<count` that favours small indexes heavily (about a power law): the few accounts with
    /// thousands of followers, the recent posts that get the likes.
    public mutating func skewedIndex(below count: Int, skew: Double = 3) -> Int {
        let uniform = Double.random(in: 0..<1, using: &self)
        return min(count - 1, Int(Double(count) * pow(uniform, skew)))
    }
}
