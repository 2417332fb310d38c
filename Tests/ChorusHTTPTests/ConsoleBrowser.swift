import Foundation
import HTTPTypes
import Testing

/// A browser's part in the console's forms, over the test client: the cookies the server set, and the CSRF token of
/// the last page's forms.
struct ConsoleBrowser {
    let api: APIFixture
    var cookies: [String: String] = [:]
    var csrf: String?

    init(_ api: APIFixture) { self.api = api }

    mutating func get(_ path: String) async throws -> APIFixture.Answer {
        let answer = try await api.call(.get, path, headers: cookieHeader)
        take(answer)
        return answer
    }

    mutating func post(_ path: String, _ fields: [String: String]) async throws -> APIFixture.Answer {
        let body = fields.map { "\(Self.encoded($0.key))=\(Self.encoded($0.value))" }.joined(separator: "&")
        var headers = cookieHeader
        headers["Content-Type"] = "application/x-www-form-urlencoded"
        let answer = try await api.call(.post, path, body: Array(body.utf8), headers: headers)
        take(answer)
        return answer
    }

    /// Signs in with `token` through the sign-in page's form.
    mutating func signIn(_ token: String = APIFixture.adminToken) async throws -> APIFixture.Answer {
        _ = try await get("/admin/sign-in")
        return try await post("/admin/sign-in", ["csrf": csrf ?? "", "token": token])
    }

    private var cookieHeader: [String: String] {
        cookies.isEmpty ? [:] : ["Cookie": cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")]
    }

    private mutating func take(_ answer: APIFixture.Answer) {
        for line in answer.headers[values: .setCookie] {
            let pair = line.split(separator: ";")[0].split(separator: "=", maxSplits: 1)
            let value = pair.count > 1 ? String(pair[1]) : ""
            cookies[String(pair[0])] = value.isEmpty ? nil : value
        }
        let page = String(decoding: answer.bytes, as: UTF8.self)
        if let range = page.range(of: #"name="csrf" value="([^"]*)""#, options: .regularExpression) {
            csrf = String(page[range].dropFirst(#"name="csrf" value=""#.count).dropLast())
        }
    }

    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
    }
}

extension ConsoleBrowser {
    /// The page at `path`, which must answer 200, as text.
    mutating func page(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let answer = try await get(path)
        #expect(answer.status == .ok, "\(path): \(answer.status)", sourceLocation: sourceLocation)
        return String(decoding: answer.bytes, as: UTF8.self)
    }

    /// The page at `path` once `condition` holds of it, asked for again every 50 ms: for what a sender in the
    /// background does. Records an issue, and answers the last page, when it still does not after 20 s.
    mutating func page(
        _ path: String, until description: String, sourceLocation: SourceLocation = #_sourceLocation,
        _ condition: (String) -> Bool
    ) async throws -> String {
        var page = ""
        for _ in 0..<400 {
            page = try await self.page(path, sourceLocation: sourceLocation)
            if condition(page) { return page }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("\(path): not \(description) within 20 s", sourceLocation: sourceLocation)
        return page
    }

    /// Submits a form of the last page to `path`, with its CSRF token; the browser follows the redirect it answers.
    mutating func submit(_ path: String, _ fields: [String: String] = [:]) async throws -> APIFixture.Answer {
        let answer = try await post(path, fields.merging(["csrf": csrf ?? ""]) { mine, _ in mine })
        guard answer.status == .seeOther, let location = answer.headers[.location] else { return answer }
        return try await get(location)
    }
}
