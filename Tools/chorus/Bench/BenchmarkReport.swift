import Foundation

/// The figures of one benchmark suite, printed as a table for people and as one JSON line for machines.
struct BenchmarkReport {
    /// A bound a figure is expected to meet.
    enum Target {
        case atLeast(Double)
        case atMost(Double)

        func isMet(by value: Double) -> Bool {
            switch self {
            case .atLeast(let bound): value >= bound
            case .atMost(let bound): value <= bound
            }
        }

        var description: String {
            switch self {
            case .atLeast(let bound): "≥ \(BenchmarkReport.format(bound))"
            case .atMost(let bound): "≤ \(BenchmarkReport.format(bound))"
            }
        }
    }

    struct Figure {
        let name: String
        let value: Double
        let target: Target?
    }

    let suite: String
    private(set) var figures: [Figure] = []

    init(suite: String) { self.suite = suite }

    mutating func add(_ name: String, _ value: Double, target: Target? = nil) {
        figures.append(Figure(name: name, value: value, target: target))
    }

    /// Every figure with its target and whether it was met, aligned.
    var table: String {
        let rows = figures.map { figure in
            [
                figure.name, Self.format(figure.value), figure.target?.description ?? "",
                figure.target.map { $0.isMet(by: figure.value) ? "met" : "MISSED" } ?? "",
            ]
        }
        let header = ["figure", "value", "target", ""]
        let widths = (0..<header.count).map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            zip(cells, widths).enumerated().map { index, cell in
                index == 1
                    ? String(repeating: " ", count: cell.1 - cell.0.count) + cell.0
                    : cell.0 + String(repeating: " ", count: cell.1 - cell.0.count)
            }.joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }
        return ([line(header), String(repeating: "-", count: widths.reduce(0, +) + 6)] + rows.map(line))
            .joined(separator: "\n")
    }

    /// `{"suite":"…","figures":{…}}` on one line, figures in the order they were added; one that could not be
    /// measured (not finite) is `null`.
    var jsonLine: String {
        let figures = figures.map { figure in
            "\"\(figure.name)\":" + (figure.value.isFinite ? Self.format(figure.value, grouping: false) : "null")
        }.joined(separator: ",")
        return "{\"suite\":\"\(suite)\",\"figures\":{\(figures)}}"
    }

    static func format(_ value: Double, grouping: Bool = true) -> String {
        let decimals = value.magnitude >= 100 || value == value.rounded() ? 0 : (value.magnitude >= 1 ? 2 : 3)
        let text = String(format: "%.\(decimals)f", value)
        guard grouping, decimals == 0, value.magnitude >= 10_000 else { return text }
        var grouped = ""
        for (index, character) in text.reversed().enumerated() {
            if index > 0, index % 3 == 0, character != "-" { grouped.append(",") }
            grouped.append(character)
        }
        return String(grouped.reversed())
    }
}

extension Array where Element == Double {
    /// The middle value (the upper one of an even count); the array must not be empty.
    var median: Double { sorted()[count / 2] }
}
