import ChorusTestSupport
import Foundation
import Testing

@Suite("chorus serve: options")
struct ServeOptionsTests {
    @Test("--kept-pages takes a size or off, and anything else is refused before the server opens the data directory")
    func keptPages() async throws {
        try await withTemporaryDirectory { directory in
            let data = directory + "/data"
            let flag = try await runChorus(["serve", "--data", data, "--kept-pages", "lots"])
            #expect(flag.status != 0)
            #expect(flag.standardError.contains("--kept-pages (or CHORUS_KEPT_PAGES) must be off or a whole number"))
            let variable = try await runChorus(["serve", "--data", data], environment: ["CHORUS_KEPT_PAGES": "-5M"])
            #expect(variable.status != 0)
            #expect(variable.standardError.contains("not -5M"))
            #expect(!FileManager.default.fileExists(atPath: data), "nothing was opened")
        }
    }
}
