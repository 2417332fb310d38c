import ArgumentParser

/// A size given on the command line: a whole number of bytes, or of K, M, G or T (powers of 1024), such as `800M`.
struct ByteCount: ExpressibleByArgument {
    static let help = "a whole number of bytes, or of K, M, G or T, such as 800M"
    /// Below this LMDB's own pages and the decision state leave no room for events.
    static let minimumLogSize = 1 << 20

    let bytes: Int

    init?(argument: String) {
        let units: [Character: Int] = ["K": 10, "M": 20, "G": 30, "T": 40]
        var digits = Substring(argument)
        var shift = 0
        if let last = digits.last?.uppercased().first, let unit = units[last] {
            shift = unit
            digits = digits.dropLast()
        }
        guard let count = Int(digits), count > 0, count <= Int.max >> shift else { return nil }
        bytes = count << shift
    }
}
