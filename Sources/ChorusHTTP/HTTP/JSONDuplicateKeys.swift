/// Finds a key given twice in one object of a JSON text. JSON leaves such a text's meaning open, and readers differ:
/// Foundation's decoder keeps the first, many proxies and gateways the last, so a body could pass a check in front of
/// the server with one value and reach it with another. Such a body is refused instead.
enum JSONDuplicateKeys {
    /// The first key found twice in one object, decoded; nil when there is none, and when the text is not JSON, which
    /// the decoder then says.
    static func first(in bytes: [UInt8]) -> String? {
        // The keys of each open object; nil for an open array.
        var scopes: [Set<[UInt8]>?] = []
        var expectingKey = false
        var index = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "{"):
                scopes.append([])
                expectingKey = true
            case UInt8(ascii: "["):
                scopes.append(nil)
                expectingKey = false
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                guard !scopes.isEmpty else { return nil }
                scopes.removeLast()
                expectingKey = false
            case UInt8(ascii: ","):
                expectingKey = scopes.last.map { $0 != nil } ?? false
            case UInt8(ascii: ":"):
                expectingKey = false
            case UInt8(ascii: "\""):
                guard let (string, end) = readString(bytes, openingAt: index) else { return nil }
                if expectingKey, let last = scopes.popLast(), var keys = last {
                    guard keys.insert(string).inserted else { return String(decoding: string, as: UTF8.self) }
                    scopes.append(keys)
                    expectingKey = false
                }
                index = end
                continue
            default:
                break
            }
            index += 1
        }
        return nil
    }

    /// The string whose opening quote is at `start`, its escapes decoded into UTF-8, and the index after its closing
    /// quote; nil when it is not a valid JSON string.
    private static func readString(_ bytes: [UInt8], openingAt start: Int) -> ([UInt8], Int)? {
        var decoded: [UInt8] = []
        var index = start + 1
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return (decoded, index)
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { return nil }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escape)
                case UInt8(ascii: "b"): decoded.append(0x08)
                case UInt8(ascii: "f"): decoded.append(0x0C)
                case UInt8(ascii: "n"): decoded.append(0x0A)
                case UInt8(ascii: "r"): decoded.append(0x0D)
                case UInt8(ascii: "t"): decoded.append(0x09)
                case UInt8(ascii: "u"):
                    guard let unit = hexUnit(bytes, at: index) else { return nil }
                    index += 4
                    var value = UInt32(unit)
                    // A high surrogate takes the low one after it.
                    if (0xD800..<0xDC00).contains(unit), index + 6 <= bytes.count, bytes[index] == UInt8(ascii: "\\"),
                        bytes[index + 1] == UInt8(ascii: "u"), let low = hexUnit(bytes, at: index + 2),
                        (0xDC00..<0xE000).contains(low)
                    {
                        value = 0x10000 + (UInt32(unit - 0xD800) << 10) + UInt32(low - 0xDC00)
                        index += 6
                    }
                    if let scalar = Unicode.Scalar(value) {
                        decoded += Array(String(scalar).utf8)
                    } else {
                        // A lone surrogate, after a byte no UTF-8 has: two keys with the same one are the same key.
                        decoded += [0xFF, UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
                    }
                default:
                    return nil
                }
            default:
                decoded.append(byte)
            }
        }
        return nil
    }

    /// The four hexadecimal digits at `index`, as a UTF-16 code unit.
    private static func hexUnit(_ bytes: [UInt8], at index: Int) -> UInt16? {
        guard index + 4 <= bytes.count else { return nil }
        var unit: UInt16 = 0
        for byte in bytes[index..<index + 4] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            unit = unit << 4 | UInt16(digit)
        }
        return unit
    }
}
