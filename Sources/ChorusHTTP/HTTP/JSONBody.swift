import Foundation
import Hummingbird

/// JSON in and out: bodies are read with a size limit and decoded strictly (wrong types, malformed JSON and a field
/// given twice are `400 bad_request` naming the field); answers are written by ``JSONWriter``.
enum JSONBody {
    /// No JSON body openapi.yaml defines comes near this: the longest text field is 2,200 characters.
    static let maximumSize = 64 << 10

    static func encode(_ value: some JSONWritable) -> [UInt8] { JSONWriter.encode(value) }

    /// The raw body, refused past `limit` bytes while reading, before it is all in memory.
    static func collect(_ request: Request, limit: Int = maximumSize) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await buffer in request.body {
            guard bytes.count + buffer.readableBytes <= limit else {
                throw APIError.tooLarge("the body is larger than \(limit) bytes")
            }
            bytes.append(contentsOf: buffer.readableBytesView)
        }
        return bytes
    }

    /// Decodes a JSON object body into `type`.
    static func decode<T: Decodable>(_ type: T.Type, from request: Request) async throws -> (T, [UInt8]) {
        if let contentType = request.headers[.contentType],
            !contentType.lowercased().hasPrefix("application/json")
        {
            throw APIError.unsupportedMediaType("send JSON with Content-Type: application/json, not \(contentType)")
        }
        let bytes = try await collect(request)
        return (try decode(type, from: bytes), bytes)
    }

    static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        guard !bytes.isEmpty else { throw APIError.badRequest("the body must be a JSON object") }
        if let key = JSONDuplicateKeys.first(in: bytes) {
            throw APIError.badRequest("field \(key) is given twice; send each field once")
        }
        do {
            return try JSONDecoder().decode(type, from: Data(bytes))
        } catch let error as DecodingError {
            throw APIError.badRequest(describe(error))
        } catch let error as APIError {
            throw error
        } catch {
            throw APIError.badRequest("the body is not valid JSON")
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return path.isEmpty ? "the body" : "field \(path)"
        }
        switch error {
        case .typeMismatch(let type, let context):
            return "\(path(context)) must be \(typeName(type))"
        case .valueNotFound(let type, let context):
            return "\(path(context)) must be \(typeName(type)), not null"
        case .keyNotFound(let key, _):
            return "field \(key.stringValue) is required"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "the body is not valid JSON" : "\(path(context)) is not valid"
        @unknown default:
            return "the body is not valid"
        }
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Int.Type, is UInt64.Type: "a number"
        default: "an object"
        }
    }
}

extension KeyedDecodingContainer {
    /// An optional field's value, nil when the body leaves it out; `null` is refused (`400`), as the contract types the
    /// field as a value that may be missing, never null.
    func decodeUnlessMissing<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard contains(key) else { return nil }
        return try decode(type, forKey: key)
    }
}
