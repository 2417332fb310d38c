import ArgumentParser
import ChorusBackend
import ChorusDemo
import ChorusFixtures
import ChorusProcesses
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct MediaBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "media",
        abstract: "Photo uploads through the image pipeline, against libvips' own vipsthumbnail.",
        discussion: """
            Makes three real-size photos with libvips' `vips` command (a 12-megapixel JPEG, the same as HEIC, a \
            6-megapixel PNG), then uploads each --uploads times over HTTP to a fresh `chorus serve`, --concurrency at \
            a time, each by a user of its own so that none is a repeat; every upload makes both variants and the \
            BlurHash before it is answered. The baseline runs `vipsthumbnail` on the same files at the same \
            concurrency, making the same two sizes (2048 and 640 px, stripped): pipeline_to_vipsthumbnail_ratio \
            divides the uploads per second by its pairs per second, measured in the same run, in alternating \
            rounds. Then --burst uploads at once, and --burst hostile ones (a 50-megapixel flood, a bomb, a cut \
            photo, noise), while the server's anonymous memory and its image workers' \
            resident memory are sampled. Needs libvips' command-line tools (Debian: libvips-tools).
            """
    )

    @OptionGroup var output: BenchOutputOptions

    @Option(help: "Uploads of each photo per round.")
    var uploads = 6

    @Option(help: "Uploads (and vipsthumbnail pairs) at once.")
    var concurrency = ProcessInfo.processInfo.activeProcessorCount

    @Option(help: "Rounds of uploads and of the baseline, alternating.")
    var rounds = 2

    @Option(help: "Uploads at once while memory is sampled.")
    var burst = 8

    mutating func run() async throws {
        #if DEBUG
        printProgress("warning: this is a debug build; benchmark with `swift run -c release chorus bench media`")
        #endif
        guard uploads >= 1, concurrency >= 1, rounds >= 1, burst >= 1 else {
            throw ValidationError("--uploads, --concurrency, --rounds and --burst must be positive")
        }
        let workDirectory = try BenchWorkDirectory(parent: output.workDirectory)
        defer { workDirectory.remove() }
        printProgress("making the photos with vips in \(workDirectory.path)")
        let photos = try await BenchPhotos.make(in: workDirectory.path)
        let server = try await BenchServer(data: workDirectory.path + "/data", arguments: ["--no-rate-limits"])
        defer { server.stop() }
        let uploader = try await PhotoUploader(server: server, users: uploads * photos.count * rounds + 2 * burst)

        var pipeline: [Duration] = []
        var baseline: [Duration] = []
        var latencies = Latencies()
        let jobs = (0..<uploads).flatMap { _ in photos }
        for round in 1...rounds {
            let (elapsed, times) = try await uploader.upload(jobs, concurrency: concurrency)
            pipeline.append(elapsed)
            for time in times { latencies.add(time) }
            baseline.append(try await BenchPhotos.vipsthumbnail(jobs, concurrency: concurrency, in: workDirectory.path))
            printProgress(
                "round \(round): \(jobs.count) uploads in \(BenchmarkReport.format(elapsed.seconds)) s, "
                    + "vipsthumbnail in \(BenchmarkReport.format(baseline.last!.seconds)) s")
        }
        printProgress("\(burst) uploads at once, sampling memory")
        let idle = server.anonymousMemoryMiB()
        let serverMemory = MemorySampler.anonymousMemory(of: server.processIdentifier)
        let workersMemory = MemorySampler.childrenMemory(of: server.processIdentifier)
        _ = try await uploader.upload(Array(repeating: photos[0], count: burst), concurrency: burst)
        let peaks = (server: serverMemory.stop(), workers: workersMemory.stop())
        printProgress("\(burst) hostile uploads at once, sampling memory")
        let hostile = try await BenchPhotos.hostile(from: photos[0], in: workDirectory.path)
        let hostileServer = MemorySampler.anonymousMemory(of: server.processIdentifier)
        let hostileWorkers = MemorySampler.childrenMemory(of: server.processIdentifier)
        _ = try await uploader.upload(
            (0..<burst).map { hostile[$0 % hostile.count] }, concurrency: burst, accepting: [201, 422])
        let hostilePeaks = (server: hostileServer.stop(), workers: hostileWorkers.stop())

        let uploadsPerSecond = Double(jobs.count * rounds) / pipeline.reduce(.zero, +).seconds
        let pairsPerSecond = Double(jobs.count * rounds) / baseline.reduce(.zero, +).seconds
        var report = BenchmarkReport(suite: "media")
        report.add("uploads_per_s", uploadsPerSecond)
        report.add("vipsthumbnail_pairs_per_s", pairsPerSecond)
        report.add("pipeline_to_vipsthumbnail_ratio", uploadsPerSecond / pairsPerSecond, target: .atLeast(0.8))
        report.add("upload_ms_p50", latencies.percentile(0.5))
        report.add("upload_ms_p99", latencies.percentile(0.99))
        report.add("server_idle_mib", idle)
        report.add("server_peak_mib_during_burst", peaks.server)
        report.add("workers_peak_mib_during_burst", peaks.workers)
        report.add("server_peak_mib_during_hostile_burst", hostilePeaks.server)
        report.add("workers_peak_mib_during_hostile_burst", hostilePeaks.workers)
        print(report.table)
        if output.json { print(report.jsonLine) }
    }
}

/// The benchmark's photos, made with libvips' `vips` command so that no image is committed: a 12-megapixel photo of
/// smooth noise over gradients (what a camera's JPEG compresses like) as JPEG and as HEIC, and a 6-megapixel PNG.
enum BenchPhotos {
    struct Photo: Sendable {
        let path: String
        let type: String
        let bytes: Data
    }

    static func make(in directory: String) async throws -> [Photo] {
        let steps: [[String]] = [
            ["xyz", "xy.v", "4032", "3024"],
            ["extract_band", "xy.v", "x.v", "0"],
            ["extract_band", "xy.v", "y.v", "1"],
            ["linear", "x.v", "red.v", "0.06", "0"],
            ["linear", "y.v", "green.v", "0.08", "0"],
            ["gaussnoise", "noise.v", "4032", "3024", "--sigma", "40", "--mean", "128"],
            ["gaussblur", "noise.v", "blue.v", "1.5"],
            ["bandjoin", "red.v green.v blue.v", "joined.v"],
            ["cast", "joined.v", "cast.v", "uchar"],
            ["copy", "cast.v", "photo.v", "--interpretation", "srgb"],
            ["jpegsave", "photo.v", "photo.jpg", "--Q", "90"],
            ["heifsave", "photo.v", "photo.heic", "--Q", "50"],
            ["resize", "photo.v", "half.v", "0.7"],
            ["pngsave", "half.v", "photo.png"],
        ]
        for step in steps {
            let run = try await ChildProcess.run("/usr/bin/env", ["vips"] + step, directory: directory)
            guard run.status == 0 else {
                throw BenchmarkError("vips \(step.joined(separator: " ")): \(run.errors) (install libvips-tools)")
            }
        }
        return try [("photo.jpg", "image/jpeg"), ("photo.heic", "image/heic"), ("photo.png", "image/png")].map {
            let path = directory + "/" + $0.0
            return Photo(path: path, type: $0.1, bytes: try Data(contentsOf: URL(fileURLWithPath: path)))
        }
    }

    /// Uploads meant to hurt: 50 megapixels of one colour (a few kilobytes of PNG that decode to 150 MB, the most the
    /// limits take), 72 megapixels of it (refused from the header), the photo cut in half, and bytes that only claim
    /// to be a JPEG.
    static func hostile(from photo: Photo, in directory: String) async throws -> [Photo] {
        for (width, height, name) in [("10000", "5000", "flood.png"), ("12000", "6000", "bomb.png")] {
            let run = try await ChildProcess.run(
                "/usr/bin/env", ["vips", "black", name, width, height, "--bands", "3"], directory: directory)
            guard run.status == 0 else { throw BenchmarkError("vips black \(name): \(run.errors)") }
        }
        func file(_ name: String, _ type: String) throws -> Photo {
            let path = directory + "/" + name
            return Photo(path: path, type: type, bytes: try Data(contentsOf: URL(fileURLWithPath: path)))
        }
        var garbage = SeededGenerator(seed: 57)
        let noise = Data((0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &garbage) })
        return [
            try file("flood.png", "image/png"), try file("bomb.png", "image/png"),
            Photo(path: photo.path + " (cut)", type: photo.type, bytes: photo.bytes.prefix(photo.bytes.count / 2)),
            Photo(path: "noise", type: "image/jpeg", bytes: noise),
        ]
    }

    /// How long `vipsthumbnail` takes to make the two sizes of every photo of `jobs`, `concurrency` at a time.
    static func vipsthumbnail(_ jobs: [Photo], concurrency: Int, in directory: String) async throws -> Duration {
        let started = ContinuousClock.now
        try await forEach(jobs, concurrency: concurrency) { index, photo in
            for size in [2048, 640] {
                let output = "\(directory)/thumb-\(index)-\(size).jpg[Q=85,strip]"
                let run = try await ChildProcess.run(
                    "/usr/bin/env", ["vipsthumbnail", photo.path, "-s", String(size), "-o", output])
                guard run.status == 0 else { throw BenchmarkError("vipsthumbnail \(photo.path): \(run.errors)") }
            }
        }
        return started.duration(to: .now)
    }
}

/// Runs `body` for each element, `concurrency` at a time.
func forEach<T: Sendable>(
    _ elements: [T], concurrency: Int, _ body: @escaping @Sendable (Int, T) async throws -> Void
) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for (index, element) in elements.enumerated() {
            if index >= concurrency { try await group.next() }
            group.addTask { try await body(index, element) }
        }
        try await group.waitForAll()
    }
}

/// Uploads photos to a server, each by a user not yet used: the same bytes from one user are stored once, and the
/// benchmark wants every upload processed.
actor PhotoUploader {
    private let base: String
    private var tokens: [String]

    init(server: BenchServer, users: Int) async throws {
        base = server.base
        printProgress("registering \(users) uploaders")
        var tokens: [String] = []
        for index in 0..<users {
            let (status, body) = try await server.request(
                "POST", "/v1/auth/register",
                json: [
                    "email": "uploader\(index)@bench.chorus", "password": "password", "name": "Uploader \(index)",
                ])
            guard status == 201, let token = body["token"] as? String else {
                throw BenchmarkError("registering an uploader answered \(status)")
            }
            tokens.append(token)
        }
        self.tokens = tokens
    }

    /// Uploads `photos`, `concurrency` at a time; returns the time of all and of each.
    func upload(_ photos: [BenchPhotos.Photo], concurrency: Int, accepting statuses: Set<Int> = [201]) async throws
        -> (Duration, [Duration])
    {
        guard tokens.count >= photos.count else { throw BenchmarkError("too few uploaders registered") }
        let jobs = Array(zip(photos, tokens.suffix(photos.count)))
        tokens.removeLast(photos.count)
        let client = HTTPJSONClient(base: base)
        let times = Mutex<[Duration]>([])
        let started = ContinuousClock.now
        try await forEach(jobs, concurrency: concurrency) { _, job in
            let sent = ContinuousClock.now
            let (status, answer) = try await client.upload(job.0.bytes, type: job.0.type, token: job.1)
            guard statuses.contains(status) else {
                throw BenchmarkError("uploading \(job.0.path) answered \(status): \(answer)")
            }
            times.withLock { $0.append(sent.duration(to: .now)) }
        }
        return (started.duration(to: .now), times.withLock { $0 })
    }
}
