import ArgumentParser
import ChorusImaging
import Foundation

/// One upload through the image pipeline, in a process of its own: what `chorus serve` starts for each upload (see
/// ``ImageWorkerPool``), so that a decoder crashed or run away by a crafted file ends this process only. Its limits
/// are set before the first byte of the file is read.
struct ImageWorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "image-worker",
        abstract: "Process one uploaded image (started by chorus serve, not by hand).",
        shouldDisplay: false
    )

    @Option(help: "The uploaded file.")
    var input: String

    @Option(help: "The type the upload claims.")
    var type: String

    @Option(help: "The most address space this process may take, in bytes.")
    var memoryLimit: Int

    @Option(help: "The most CPU time this process may take, in seconds.")
    var cpuSeconds: Int

    func run() throws {
        guard let claimed = UploadFormat(rawValue: type) else { throw ValidationError("unknown type \(type)") }
        limit(RLIMIT_AS, to: memoryLimit)
        limit(RLIMIT_CPU, to: cpuSeconds)
        guard let bytes = FileManager.default.contents(atPath: input) else {
            throw ValidationError("cannot read \(input)")
        }
        try ImagePipeline.start()
        let reply: ImageWorkerReply
        do {
            reply = .processed(try ImagePipeline.process(Array(bytes), claimed: claimed))
        } catch {
            reply = .refused(error)
        }
        FileHandle.standardOutput.write(Data(reply.encoded()))
    }

    private func limit(_ resource: __rlimit_resource, to value: Int) {
        var limit = rlimit(rlim_cur: rlim_t(value), rlim_max: rlim_t(value))
        setrlimit(__rlimit_resource_t(resource.rawValue), &limit)
    }
}
