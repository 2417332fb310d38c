import ArgumentParser
import ChorusAPI
import Foundation

/// `--data DIR`: the data directory an operator command works on; flag, then `CHORUS_DATA`, then `./chorus-data`.
struct DataDirectoryOption: ParsableArguments {
    @Option(help: "The data directory (CHORUS_DATA; default ./chorus-data).")
    var data: String?

    var directory: DataDirectory {
        DataDirectory(data ?? ProcessInfo.processInfo.environment["CHORUS_DATA"] ?? "./chorus-data")
    }

    /// The directory, which must already hold a log: operator commands never make an empty one by mistake.
    func existing() throws -> DataDirectory {
        let directory = self.directory
        guard FileManager.default.fileExists(atPath: directory.log + "/data.mdb") else {
            throw OperatorError("no event log in \(directory.log): give --data a Chorus data directory")
        }
        return directory
    }
}

/// `--json`: one JSON object per line on standard output instead of text for people.
struct JSONOutputOption: ParsableArguments {
    @Flag(help: "Print JSON lines instead of text.")
    var json = false

    /// Prints `text`, or `object` as one JSON line.
    func emit(_ text: @autoclosure () -> String, _ object: [String: Any]) {
        if json {
            print(JSONLine.encode(object))
        } else {
            print(text())
        }
    }
}

/// One JSON object on one line, keys sorted.
enum JSONLine {
    static func encode(_ object: [String: Any]) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}

/// What stops an operator command, said plainly: printed as `Error: …`, exit status 1.
struct OperatorError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
