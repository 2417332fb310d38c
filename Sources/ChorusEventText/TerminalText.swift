/// Text from the log, made safe to print on a terminal. Users' text reaches an operator's terminal through the tools,
/// and a terminal takes escape (U+001B), the C1 controls and DEL as commands: one post could retitle the window, hide
/// lines or rewrite what was printed before it. The server refuses them in new text, but a log keeps what older
/// versions took, and an imported log holds whatever its file held.
package enum TerminalText {
    /// `text` with every control character written as an escape a person can read: `\n`, `\r` and `\t` (a newline
    /// would also break one event's line in two), `\u{1B}` for the rest of C0, DEL and C1; a backslash as `\\`, so
    /// that no escape is ambiguous. Everything else as it is.
    package static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case _ where isControl(scalar): escaped += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// ``escaped(_:)``, and between double quotes (a quote in it as `\"`) when it is empty or has a space or a quote:
    /// how a field's value shows in a line of `key=value` pairs.
    package static func field(_ text: String) -> String {
        let escaped = escaped(text)
        guard escaped.isEmpty || escaped.contains(where: { $0 == " " || $0 == "\"" }) else { return escaped }
        return "\"" + escaped.replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool { scalar == "\\" || isControl(scalar) }

    /// C0, DEL and C1.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
