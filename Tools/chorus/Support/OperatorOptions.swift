import ArgumentParser
import ChorusBackend
import ChorusStorage
import Foundation

/// `--data DIR`: the data directory an operator command works on; flag, then `CHORUS_DATA`, then `./chorus-data`.
struct DataDirectoryOption: ParsableArguments {
    @Option(help: "The data directory (CHORUS_DATA; default ./chorus-data).")
    var data: String?

    var directory: DataDirectory { directory(environment: ProcessInfo.processInfo.environment) }

    func directory(environment: [String: String]) -> DataDirectory {
        DataDirectory(data ?? environment["CHORUS_DATA"] ?? "./chorus-data")
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

/// One JSON object on one line, keys sorted. Written by hand: `JSONSerialization` made `chorus replay --json` ten
/// times slower than its text output.
enum JSONLine {
    static func encode(_ object: [String: Any]) -> String {
        var text = ""
        write(object, into: &text)
        return text
    }

    private static func write(_ value: Any, into text: inout String) {
        switch value {
        case let number as NSNumber where type(of: value) is NSNumber.Type:
            // Parsed by Foundation (a server's answer): its booleans are a subclass, and a 0 or 1 would pass for a
            // Bool.
            let isBoolean = String(describing: type(of: value)).contains("Boolean")
            text += isBoolean ? (number.boolValue ? "true" : "false") : number.stringValue
        case let string as String: quote(string, into: &text)
        case let flag as Bool: text += flag ? "true" : "false"
        case let number as any BinaryInteger: text += String(describing: number)
        case let number as Double: text += number.isFinite ? String(number) : "null"
        case let object as [String: Any]:
            text += "{"
            for (index, key) in object.keys.sorted().enumerated() {
                if index > 0 { text += "," }
                quote(key, into: &text)
                text += ":"
                write(object[key]!, into: &text)
            }
            text += "}"
        case let array as [Any]:
            text += "["
            for (index, element) in array.enumerated() {
                if index > 0 { text += "," }
                write(element, into: &text)
            }
            text += "]"
        default: text += "null"  // NSNull, and nil
        }
    }

    private static func quote(_ string: String, into text: inout String) {
        text += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            // DEL and C1 too: JSON may hold them raw, and a terminal takes them as commands.
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value):
                text += "\\u00" + String(scalar.value >> 4, radix: 16) + String(scalar.value & 0xF, radix: 16)
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}

/// What stops an operator command, said plainly: printed as `Error: …`, exit status 1.
struct OperatorError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }

    /// What was being `done` and the system's reason for the failure in `errno`, worded as `POSIXError.current` words
    /// it for the errors it throws.
    static func system(_ doing: String) -> OperatorError {
        OperatorError(POSIXError.current(doing).localizedDescription)
    }
}

/// Writes every byte of `bytes` to `descriptor` (standard output, or a file the command opened); a failure says what
/// was being `done` and why, as an operator reads it, not as an error domain and code.
func writeOut(_ bytes: [UInt8], to descriptor: Int32, doing: String) throws {
    do {
        try AtomicFile.writeAll(bytes, to: descriptor, doing: doing)
    } catch {
        throw OperatorError(error.localizedDescription)
    }
}
