import ChorusProcesses
import ChorusTestSupport
import Foundation
import Testing

@Suite("chorus log export and import")
struct LogExportImportCommandTests {
    @Test("export, import and export again give the same bytes; an interrupted import resumes without duplicates")
    func roundTrip() async throws {
        try await withTemporaryDirectory { root in
            try #require(
                try await runChorus(["demo", "--data", root + "/a", "--events", "1500", "--seed", "9"]).status == 0)
            let first = root + "/first.jsonl"
            let export = try await runChorus(["log", "export", "--data", root + "/a", "--output", first])
            try #require(export.status == 0, "\(export.standardError)")
            let lines = try String(contentsOfFile: first, encoding: .utf8).split(separator: "\n")
            #expect(lines.count >= 1500)
            // An account's deletion correlates the events it appends with its first: lines whose correlation id is
            // not their command id, which the import reads apart from it.
            #expect(
                try lines.contains { line in
                    let object = try lastJSONLine(String(line))
                    return object["correlationId"] as? String != object["commandId"] as? String
                })

            // An import stopped part-way, inside a command of two events (a sign-up and its session): the first
            // half goes in now, the second with the rest.
            let commands = try lines.map { try #require(try lastJSONLine(String($0))["commandId"] as? String) }
            let cut = try #require((1..<lines.count - 1).last { commands[$0 - 1] == commands[$0] })
            let partial = root + "/partial.jsonl"
            // Every tenth line as another JSON writer puts it (keys in any order, slashes escaped), and every seventh
            // with its ids in lowercase hexadecimal: the same events.
            let rewritten = try lines.prefix(cut).enumerated().map { index, line in
                if index % 7 == 3 {
                    let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                    let ids = [object["commandId"], object["correlationId"]].compactMap { $0 as? String }
                    return ids.reduce(String(line)) { $0.replacingOccurrences(of: $1, with: $1.lowercased()) }
                }
                guard index % 10 == 0 else { return String(line) }
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
                return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
            }
            #expect(zip(rewritten, lines).contains { $0 != $1 && $0.lowercased() == $1.lowercased() })
            #expect(rewritten.contains { $0.contains("\\/") || !lines.contains(Substring($0)) })
            try writeExport(rewritten, to: partial)
            // The sealed personal fields open with the keys of the data directory they were written in.
            try FileManager.default.createDirectory(atPath: root + "/b", withIntermediateDirectories: false)
            try FileManager.default.copyItem(atPath: root + "/a/keys", toPath: root + "/b/keys")
            let stopped = try await runChorus(["log", "import", "--data", root + "/b", partial, "--json"])
            #expect(stopped.status == 0, "\(stopped.standardError)")
            #expect(try lastJSONLine(stopped.standardOutput)["imported"] as? Int == cut)

            let resumed = try await runChorus(["log", "import", "--data", root + "/b", first, "--json"])
            #expect(resumed.status == 0, "\(resumed.standardError)")
            let report = try lastJSONLine(resumed.standardOutput)
            #expect(report["skipped"] as? Int == cut)
            #expect(report["imported"] as? Int == lines.count - cut)
            #expect(report["head"] as? Int == lines.count)

            let second = root + "/second.jsonl"
            try #require(try await runChorus(["log", "export", "--data", root + "/b", "--output", second]).status == 0)
            #expect(try Data(contentsOf: URL(fileURLWithPath: second)) == Data(contentsOf: URL(fileURLWithPath: first)))
            let verify = try await runChorus(["log", "verify", "--data", root + "/b"])
            #expect(verify.status == 0, "\(verify.standardOutput)")

            // Exported to standard output too, from a position on.
            let tail = try await runChorus(["log", "export", "--data", root + "/a", "--from", "1001"])
            let tailLines: [String] = tail.standardOutput.split(separator: "\n").map(String.init)
            #expect(tailLines == lines.dropFirst(1000).map(String.init))
        }
    }

    @Test("an export is written in place, as the shell's > would, into a pipe too")
    func exportIntoAPipe() async throws {
        try await withTemporaryDirectory { root in
            let data = root + "/data"
            try #require(try await runChorus(["demo", "--data", data, "--events", "300", "--seed", "2"]).status == 0)
            let whole = try await runChorus(["log", "export", "--data", data])
            try #require(whole.status == 0, "\(whole.standardError)")
            let pipe = root + "/pipe"
            try #require(mkfifo(pipe, 0o644) == 0)
            // A reader on the pipe; an export that replaced the pipe with a file would leave it waiting, until
            // `timeout` ends it.
            let run = try await ChildProcess.run(
                "/bin/sh",
                [
                    "-c", #"timeout 60 cat "$2" > "$2.out" & "$0" log export --data "$1" -o "$2"; s=$?; wait; exit $s"#,
                    chorusExecutableURL().path, data, pipe,
                ])
            #expect(run.status == 0, "\(run.errors)")
            #expect(try String(contentsOfFile: pipe + ".out", encoding: .utf8) == whole.standardOutput)
            var status = stat()
            #expect(lstat(pipe, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO, "the pipe is still a pipe")
        }
    }

    @Test("an export that cannot be written says why, and leaves no partial file behind")
    func unwritableExport() async throws {
        try await withTemporaryDirectory { root in
            let data = root + "/data"
            try #require(try await runChorus(["demo", "--data", data, "--events", "5000", "--seed", "2"]).status == 0)
            let full = try await ChildProcess.run(
                "/bin/sh", ["-c", #"exec "$0" log export --data "$1" > /dev/full"#, chorusExecutableURL().path, data])
            #expect(full.status == 1)
            #expect(
                full.errors.contains("Error: cannot write the export to standard output: No space left on device\n"),
                "\(full.errors)")

            let nowhere = root + "/no/such/dir/x.jsonl"
            let missing = try await runChorus(["log", "export", "--data", data, "-o", nowhere])
            #expect(missing.status == 1)
            #expect(
                missing.standardError.contains("Error: cannot create \(nowhere): No such file or directory\n"),
                "\(missing.standardError)")

            guard SmallFilesystem.canMount else { return }
            // A file on a disk too small for it (the export is about two megabytes).
            let disk = try SmallFilesystem(at: root + "/small", megabytes: 1)
            defer { disk.unmount() }
            let target = disk.path + "/events.jsonl"
            let small = try await runChorus(["log", "export", "--data", data, "-o", target])
            #expect(small.status == 1)
            #expect(
                small.standardError.contains("Error: cannot write the export to \(target): No space left on device\n"),
                "\(small.standardError)")
            #expect(!FileManager.default.fileExists(atPath: target))
        }
    }

    @Test("text beyond ASCII and escaped characters go in and come out as the same bytes; invalid UTF-8 is refused")
    func textBeyondASCII() async throws {
        try await withTemporaryDirectory { root in
            try #require(
                try await runChorus(["demo", "--data", root + "/a", "--events", "200", "--seed", "4"]).status == 0)
            let lines = try await runChorus(["log", "export", "--data", root + "/a"]).standardOutput
                .split(separator: "\n").map(String.init)
            let actor = try #require(try lastJSONLine(lines[5])["actor"] as? String)
            var changed = lines
            changed[5] = lines[5].replacingOccurrences(of: "\"actor\":\"\(actor)\"", with: "\"actor\":\"운영자 José\"")
            // And every character JSON escapes, as JSONEncoder writes them (slashes left as they are), in and after
            // the eight-byte words the writer scans at once, and in the bytes past the last whole word.
            let other = try #require(try lastJSONLine(lines[6])["actor"] as? String)
            let escaped = #"0123456789abcdea\b\f\n\r\t\u0001\u001f\"\\/z0123456789abcd\"0123456789abcdef\n"#
            changed[6] = lines[6].replacingOccurrences(
                of: "\"actor\":\"\(other)\"", with: "\"actor\":\"" + escaped + "\"")
            #expect(changed[5] != lines[5] && changed[6] != lines[6])
            for name in ["b", "c"] {
                try FileManager.default.createDirectory(atPath: root + "/" + name, withIntermediateDirectories: false)
                try FileManager.default.copyItem(atPath: root + "/a/keys", toPath: root + "/\(name)/keys")
            }
            try writeExport(changed, to: root + "/changed.jsonl")
            let imported = try await runChorus(["log", "import", "--data", root + "/b", root + "/changed.jsonl"])
            #expect(imported.status == 0, "\(imported.standardError)")
            let again = try await runChorus(["log", "export", "--data", root + "/b"]).standardOutput
            #expect(again.split(separator: "\n").map(String.init) == changed)

            // The same line with a byte that is not UTF-8 in place of the actor's first.
            var bytes = Array(changed[5].utf8)
            let at = try #require(bytes.indices.first { bytes[$0...].starts(with: Array("운".utf8)) })
            bytes[at] = 0xFF
            let file = root + "/invalid.jsonl"
            let before = Array((lines.prefix(5).joined(separator: "\n") + "\n").utf8)
            let after = Array(("\n" + lines.dropFirst(6).joined(separator: "\n") + "\n").utf8)
            try Data(before + bytes + after).write(to: URL(fileURLWithPath: file))
            let refused = try await runChorus(["log", "import", "--data", root + "/c", file])
            #expect(refused.status == 1)
            #expect(refused.standardError.contains("line 6:"), "\(refused.standardError)")
        }
    }

    @Test("a bad line after several batches: everything before it is appended, and the import resumes")
    func refusalAfterBatches() async throws {
        try await withTemporaryDirectory { root in
            let first = try await exportedDemoLog(in: root, events: 10_000, seed: 4)
            var lines = try exportLines(first)
            try #require(lines.count >= 10_000)
            // Batches of about 2,048 events are decoded while the one before is appended; the fifth is being read.
            lines[8_999] = "{not json"
            let broken = root + "/broken.jsonl"
            try writeExport(lines, to: broken)
            try dataDirectoryForImport(at: root + "/b", keysOf: root + "/a")

            let nonsense = try await runChorus(["log", "import", "--data", root + "/b", broken, "--batch-events", "0"])
            #expect(nonsense.status != 0)
            #expect(nonsense.standardError.contains("--batch-events must be between 1 and 1,000,000"))
            let refused = try await runChorus([
                "log", "import", "--data", root + "/b", broken, "--batch-events", "2048",
            ])
            #expect(refused.status == 1)
            #expect(refused.standardError.contains("line 9000: not a JSON object"), "\(refused.standardError)")
            let verify = try await runChorus(["log", "verify", "--data", root + "/b", "--json"])
            #expect(verify.status == 0, "\(verify.standardOutput)")
            let status = try await runChorus([
                "projections", "status", "--data", root + "/b", "--json", "--interval", "0.01",
            ])
            let head = try #require(try lastJSONLine(status.standardOutput)["head"] as? Int)
            #expect(head == 8_999, "every event before the bad line went in")

            let resumed = try await runChorus(["log", "import", "--data", root + "/b", first, "--json"])
            #expect(resumed.status == 0, "\(resumed.standardError)")
            #expect(try lastJSONLine(resumed.standardOutput)["skipped"] as? Int == head)
            let second = root + "/second.jsonl"
            try #require(try await runChorus(["log", "export", "--data", root + "/b", "--output", second]).status == 0)
            #expect(try Data(contentsOf: URL(fileURLWithPath: second)) == Data(contentsOf: URL(fileURLWithPath: first)))
        }
    }

    @Test("a gap the log refuses while later batches are already decoded: nothing after it goes in, the state matches")
    func refusedBatchStopsLaterOnes() async throws {
        try await withTemporaryDirectory { root in
            let export = try await exportedDemoLog(in: root, events: 8_000, seed: 5)
            var lines = try exportLines(export)
            try #require(lines.count >= 8_000)
            // Position 5,000 is missing: its batch is refused by the log (not by the reader, which checks no order),
            // while the batches after it are being read and decoded.
            lines.remove(at: 4_999)
            let refused = try await importInSmallBatches(lines, in: root)
            #expect(refused.status == 1)
            #expect(refused.standardError.contains("position 5001 where 5000 is next"), "\(refused.standardError)")
            #expect(refused.standardError.contains("the log now ends at position 4999"), "\(refused.standardError)")
            #expect(try await verifiedHead(of: root + "/b") == 4_999, "nothing after the gap")
        }
    }

    @Test("a stream whose version skips in a later batch: the streams written before it are taken out of the index")
    func skippedVersionLeavesNoIndexEntries() async throws {
        try await withTemporaryDirectory { root in
            let export = try await exportedDemoLog(in: root, events: 3_000, seed: 7)
            let lines = try exportLines(export)
            let fields = try lines.map { try lastJSONLine($0) }
            // A stream seen before, whose name sorts after most others in its batch: the batch's streams are checked
            // and written in name order, so most are in the index when this one is refused.
            let candidates = (1_500..<2_000).filter { (fields[$0]["streamVersion"] as? Int ?? 0) >= 2 }
            let skipped = try #require(candidates.max { "\(fields[$0]["stream"]!)" < "\(fields[$1]["stream"]!)" })
            let stream = try #require(fields[skipped]["stream"] as? String)
            // Its versions from there on one higher: they run on within each batch, but not from the index.
            let changed = lines.indices.map { index -> String in
                guard index >= skipped, fields[index]["stream"] as? String == stream,
                    let version = fields[index]["streamVersion"] as? Int
                else { return lines[index] }
                return lines[index].replacingOccurrences(
                    of: "\"stream\":\"\(stream)\",\"streamVersion\":\(version),",
                    with: "\"stream\":\"\(stream)\",\"streamVersion\":\(version + 1),")
            }
            #expect(changed[skipped] != lines[skipped])

            let refused = try await importInSmallBatches(changed, in: root)
            #expect(refused.status == 1)
            #expect(refused.standardError.contains("stream \(stream) is at version"), "\(refused.standardError)")
            // Sound: the stream index holds an entry for each event and no more, nothing of the refused batch's.
            let head = try #require(try await verifiedHead(of: root + "/b"))
            #expect(head < skipped + 1 && head >= skipped - 2, "every command before the skipped version went in")

            let resumed = try await runChorus(["log", "import", "--data", root + "/b", export, "--json"])
            #expect(resumed.status == 0, "\(resumed.standardError)")
            #expect(try lastJSONLine(resumed.standardOutput)["head"] as? Int == lines.count)
            #expect(try await runChorus(["log", "verify", "--data", root + "/b"]).status == 0)
        }
    }

    @Test("an import gives back the blocks it reserved; a log imported in place before is served, unwritten end cut")
    func importedLogServed() async throws {
        try await withTemporaryDirectory { root in
            let export = try await exportedDemoLog(in: root, events: 3_000, seed: 6)
            try dataDirectoryForImport(at: root + "/b", keysOf: root + "/a")
            let imported = try await runChorus(["log", "import", "--data", root + "/b", export])
            try #require(imported.status == 0, "\(imported.standardError)")
            /// The file's size, and the bytes of it actually written.
            func sizes() throws -> (size: Int, written: Int) {
                var status = stat()
                guard stat(root + "/b/log/data.mdb", &status) == 0 else { throw ServerError("no data.mdb") }
                return (Int(status.st_size), Int(status.st_blocks) * 512)
            }
            // The import writes its file whole, and gives back the disk blocks it reserved ahead of its writes.
            let written = try sizes()
            #expect(written.written >= written.size, "\(written)")
            #expect(written.written <= written.size + 64 << 10, "no blocks left past the file's end: \(written)")
            // An import that wrote in place (MDB_WRITEMAP), as earlier versions did, left its file the size of its
            // map, most of it never written.
            #expect(truncate(root + "/b/log/data.mdb", off_t(written.size * 4)) == 0)
            let afterImport = try sizes()
            #expect(afterImport.written < afterImport.size / 2, "\(afterImport)")

            let server = try await ServerProcess(data: root + "/b")
            var served = try sizes()
            for _ in 0..<100 where served.written < served.size {
                try await Task.sleep(for: .milliseconds(100))
                served = try sizes()
            }
            #expect(served.written >= served.size, "every byte of the file is written: \(served)")
            #expect(served.size < afterImport.size)
            #expect(try await server.call("GET", "/health").status == 200)
        }
    }

    @Test("bad lines are refused by their line number, keeping those before and none after; long lines go in whole")
    func refusals() async throws {
        try await withTemporaryDirectory { root in
            try #require(
                try await runChorus(["demo", "--data", root + "/a", "--events", "300", "--seed", "2"]).status == 0)
            let export = try await runChorus(["log", "export", "--data", root + "/a"])
            let lines = export.standardOutput.split(separator: "\n").map(String.init)
            func importing(_ lines: [String], into name: String) async throws -> ChorusRun {
                let file = root + "/\(name).jsonl"
                try writeExport(lines, to: file)
                // The sealed personal fields open with the keys of the data directory they were written in.
                if !FileManager.default.fileExists(atPath: root + "/" + name) {
                    try FileManager.default.createDirectory(
                        atPath: root + "/" + name, withIntermediateDirectories: false)
                    try FileManager.default.copyItem(atPath: root + "/a/keys", toPath: root + "/\(name)/keys")
                }
                return try await runChorus(["log", "import", "--data", root + "/" + name, file])
            }
            func head(of name: String) async throws -> Int {
                let status = try await runChorus([
                    "projections", "status", "--data", root + "/" + name, "--json", "--interval", "0.01",
                ])
                return try lastJSONLine(status.standardOutput)["head"] as? Int ?? -1
            }

            let notJSON = try await importing(
                Array(lines.prefix(10)) + ["{not json"] + lines.dropFirst(10), into: "notjson")
            #expect(notJSON.status == 1)
            #expect(notJSON.standardError.contains("line 11: not a JSON object"), "\(notJSON.standardError)")
            #expect(try await head(of: "notjson") == 10)

            // A line longer than the reader's megabyte (an event with 3 MiB of JSON's white space in it) is read
            // whole, as one line.
            let spaced = "{" + String(repeating: " ", count: 3 << 20) + lines[10].dropFirst()
            let long = try await importing(Array(lines.prefix(10)) + [spaced] + lines.dropFirst(11), into: "long")
            #expect(long.status == 0, "\(long.standardError.prefix(500))")
            #expect(try await head(of: "long") == lines.count)

            // A payload that is not base64: a character outside its alphabet, in a line otherwise as export writes it.
            let notBase64 = lines[20].replacingOccurrences(of: "\"payload\":\"", with: "\"payload\":\"!")
            let unreadable = try await importing(
                Array(lines.prefix(20)) + [notBase64] + lines.dropFirst(21), into: "base64")
            #expect(unreadable.status == 1)
            #expect(
                unreadable.standardError.contains("line 21: \"payload\" is not valid"), "\(unreadable.standardError)")
            #expect(try await head(of: "base64") == 20)

            // A command id with a letter that is not a hexadecimal digit.
            let commandID = try #require(try lastJSONLine(lines[20])["commandId"] as? String)
            let notHex = lines[20].replacingOccurrences(of: commandID, with: "G" + commandID.dropFirst())
            let notUUID = try await importing(Array(lines.prefix(20)) + [notHex] + lines.dropFirst(21), into: "uuid")
            #expect(notUUID.status == 1)
            #expect(notUUID.standardError.contains("line 21: \"commandId\" is not valid"), "\(notUUID.standardError)")
            #expect(try await head(of: "uuid") == 20)

            // Fields out of range in lines otherwise as export writes them: a stream version of 0, a stream name past
            // its 200 bytes.
            let version = try #require(try lastJSONLine(lines[20])["streamVersion"] as? Int)
            let unversioned = lines[20].replacingOccurrences(
                of: "\"streamVersion\":\(version),", with: "\"streamVersion\":0,")
            let zero = try await importing(Array(lines.prefix(20)) + [unversioned], into: "zero")
            #expect(zero.status == 1)
            #expect(zero.standardError.contains("line 21: position, streamVersion and schemaVersion must be positive"))
            #expect(try await head(of: "zero") == 20)
            let stream = try #require(try lastJSONLine(lines[20])["stream"] as? String)
            let longStream = lines[20].replacingOccurrences(
                of: "\"stream\":\"\(stream)\"", with: "\"stream\":\"\(String(repeating: "s", count: 201))\"")
            let named = try await importing(Array(lines.prefix(20)) + [longStream], into: "stream")
            #expect(named.status == 1)
            #expect(named.standardError.contains("line 21: \"stream\" must be 1 to 200 UTF-8 bytes without NUL"))
            #expect(try await head(of: "stream") == 20)

            // A payload that is valid base64 but not the event its type says.
            var broken = try #require(try JSONSerialization.jsonObject(with: Data(lines[20].utf8)) as? [String: Any])
            broken["payload"] = Data([1, 2, 3]).base64EncodedString()
            let brokenLine = String(
                decoding: try JSONSerialization.data(withJSONObject: broken, options: [.sortedKeys]), as: UTF8.self)
            let undecodable = try await importing(
                Array(lines.prefix(20)) + [brokenLine] + lines.dropFirst(21), into: "undecodable")
            #expect(undecodable.status == 1)
            #expect(undecodable.standardError.contains("at position 21"), "\(undecodable.standardError)")
            #expect(try await head(of: "undecodable") == 20)

            // The second event of a two-event command does not decode: the command stays out whole, and the decision
            // state keeps nothing of the first event's changes.
            func command(_ index: Int) throws -> String? { try lastJSONLine(lines[index])["commandId"] as? String }
            let second = try #require(try lines.indices.dropFirst(21).first { try command($0) == command($0 - 1) })
            var halfBroken = try #require(
                try JSONSerialization.jsonObject(with: Data(lines[second].utf8)) as? [String: Any])
            halfBroken["payload"] = Data([1, 2, 3]).base64EncodedString()
            let halfBrokenLine = String(
                decoding: try JSONSerialization.data(withJSONObject: halfBroken, options: [.sortedKeys]), as: UTF8.self)
            let halfDecoded = try await importing(
                Array(lines.prefix(second)) + [halfBrokenLine] + lines.dropFirst(second + 1), into: "half")
            #expect(halfDecoded.status == 1)
            #expect(try await head(of: "half") == second - 1)
            let verified = try await runChorus(["log", "verify", "--data", root + "/half"])
            #expect(verified.status == 0, "\(verified.standardOutput)\(verified.standardError)")

            let gap = try await importing(Array(lines.prefix(30)) + lines.dropFirst(31), into: "gap")
            #expect(gap.status == 1)
            #expect(gap.standardError.contains("position 32 where 31 is next"), "\(gap.standardError)")
            #expect(try await head(of: "gap") == 30)

            // Another log's export into this one (whose keys do not open it either).
            try #require(
                try await runChorus(["demo", "--data", root + "/other", "--events", "300", "--seed", "3"]).status == 0)
            let foreign = try await importing(lines, into: "other")
            #expect(foreign.status == 1)
            #expect(
                foreign.standardError.contains("already holds a different event at position 1")
                    || foreign.standardError.contains("at position 1: there is no data key"),
                "\(foreign.standardError)")
        }
    }
}
