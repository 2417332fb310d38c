import Foundation
import Yams

/// `openapi.yaml`, read for checking real responses against it: a small JSON Schema checker for what the document
/// uses (`$ref`, `type` incl. lists with "null", `properties`, `required`, `additionalProperties`, `items`, `enum`,
/// `const`, `oneOf`, `minimum`, `pattern`).
struct OpenAPIContract {
    let document: [String: Any]

    init(yaml: String) throws {
        guard let document = try Yams.load(yaml: yaml) as? [String: Any] else {
            throw ContractError("not a YAML mapping")
        }
        self.document = document
    }

    /// The problems of `body` as the answer `status` of `method path` (a path template such as `/v1/users/{id}`).
    func problems(method: String, path: String, status: Int, body: Any?) -> [String] {
        guard
            let operation = (document["paths"] as? [String: Any])?[path].flatMap({
                ($0 as? [String: Any])?[method.lowercased()]
            }) as? [String: Any]
        else { return ["\(method) \(path) is not in the document"] }
        guard let responses = operation["responses"] as? [String: Any], let declared = responses[String(status)] else {
            return ["\(method) \(path) does not document status \(status)"]
        }
        guard let response = resolve(declared) as? [String: Any] else { return ["bad response object"] }
        guard let content = response["content"] as? [String: Any] else {
            return body == nil ? [] : ["\(method) \(path) \(status) documents no body"]
        }
        guard let json = content["application/json"] as? [String: Any], let schema = json["schema"] else { return [] }
        return check(body as Any, against: schema, at: "\(method) \(path) \(status)")
    }

    private func resolve(_ node: Any) -> Any {
        guard let object = node as? [String: Any], let reference = object["$ref"] as? String else { return node }
        var current: Any = document
        for part in reference.dropFirst(2).split(separator: "/") {
            current = (current as? [String: Any])?[String(part)] ?? [:]
        }
        return resolve(current)
    }

    private func check(_ value: Any, against node: Any, at path: String) -> [String] {
        guard let schema = resolve(node) as? [String: Any] else { return [] }
        if let options = schema["oneOf"] as? [Any] {
            let matching = options.filter { check(value, against: $0, at: path).isEmpty }
            return matching.count == 1 ? [] : ["\(path): matches \(matching.count) of oneOf"]
        }
        var problems: [String] = []
        if let type = schema["type"] {
            let allowed = (type as? [String]) ?? [type as? String ?? ""]
            guard allowed.contains(where: { Self.value(value, is: $0) }) else {
                return ["\(path): \(Self.describe(value)) is not \(allowed.joined(separator: " or "))"]
            }
        }
        if let options = schema["enum"] as? [Any], !options.contains(where: { "\($0)" == "\(value)" }) {
            problems.append("\(path): \(value) is not one of \(options)")
        }
        if let constant = schema["const"], "\(constant)" != "\(value)" {
            problems.append("\(path): \(value) is not \(constant)")
        }
        if let minimum = schema["minimum"] as? Int, let number = value as? Int, number < minimum {
            problems.append("\(path): \(number) < \(minimum)")
        }
        if let pattern = schema["pattern"] as? String, let text = value as? String,
            text.range(of: pattern, options: .regularExpression) == nil
        {
            problems.append("\(path): \(text) does not match \(pattern)")
        }
        if let object = value as? [String: Any] {
            let properties = schema["properties"] as? [String: Any] ?? [:]
            for name in schema["required"] as? [String] ?? [] where object[name] == nil {
                problems.append("\(path): lacks \(name)")
            }
            for (name, member) in object {
                if let property = properties[name] {
                    problems += check(member, against: property, at: "\(path).\(name)")
                } else if let additional = schema["additionalProperties"] {
                    if additional as? Bool == false { problems.append("\(path): has undocumented \(name)") }
                    if additional is [String: Any] {
                        problems += check(member, against: additional, at: "\(path).\(name)")
                    }
                }
            }
        }
        if let array = value as? [Any], let items = schema["items"] {
            for (index, item) in array.enumerated() { problems += check(item, against: items, at: "\(path)[\(index)]") }
        }
        return problems
    }

    private static func value(_ value: Any, is type: String) -> Bool {
        switch type {
        case "null": value is NSNull
        case "object": value is [String: Any]
        case "array": value is [Any]
        case "string": value is String
        // JSONSerialization gives booleans as NSNumbers of their own class, which also cast to Int.
        case "boolean":
            String(describing: Swift.type(of: value)) == String(describing: Swift.type(of: NSNumber(value: true)))
        case "integer": value is Int && !Self.value(value, is: "boolean")
        case "number": value is NSNumber && !Self.value(value, is: "boolean")
        default: false
        }
    }

    private static func describe(_ value: Any) -> String {
        value is NSNull ? "null" : "\(Swift.type(of: value)) \(value)"
    }
}

struct ContractError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
