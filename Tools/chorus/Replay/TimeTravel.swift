import ChorusBackend
import ChorusLog
import ChorusProjections
import Foundation

/// `chorus replay --to P --into DIR2`: a new data directory holding the log through P (imported event by event, with
/// the decision state as of P), the media and session key, and read models built as of P.
struct TimeTravel {
    let source: DataDirectory
    let log: EventLog
    let through: LogPosition

    func build(into path: String, output: JSONOutputOption) async throws {
        let files = FileManager.default
        guard !files.fileExists(atPath: path) else {
            throw OperatorError("\(path) already exists; give --into a new directory")
        }
        guard through > .start, through <= log.head else {
            throw OperatorError("--to must be from 1 to the head, \(log.head)")
        }
        let target = DataDirectory(path)
        do {
            let copy = try target.openLog(bulkImport: true)
            defer { copy.close() }
            let copying = WorkProgress(
                "copying the log through position \(through)", total: Int(through.rawValue), unit: "events")
            let keys = try source.openKeys(preloaded: true)
            defer { keys.close() }
            var batches = ImportBatches(log: copy, keys: keys)
            try await copy.withWriter {
                do {
                    var next = LogPosition(1)
                    while next <= through {
                        let events = try log.read(
                            from: next, limit: min(ImportBatches.defaultSize, Int(through.rawValue - next.rawValue + 1))
                        )
                        guard let last = events.last else { break }
                        for event in events { try await batches.add(event) }
                        next = last.position.next
                        copying.update(Int(last.position.rawValue))
                    }
                    try await batches.finish()
                } catch {
                    // The batch before may still be being appended: its outcome comes first.
                    try await batches.settle()
                    throw error
                }
            }
            try copy.syncToDisk()
            copying.update(batches.appended)
            copying.finish()
            try DataDirectoryFiles.copyMediaAndKeys(from: source, to: target, keys: keys)
            let building = WorkProgress("building the read models", total: Int(through.rawValue), unit: "events")
            let targetKeys = try target.openKeys(preloaded: true)
            defer { targetKeys.close() }
            let built = try ProjectionGenerations(dataDirectory: target.root).rebuildAndSwap(
                log: copy, keys: targetKeys
            ) {
                replayed, total in
                building.update(replayed, of: total)
            }
            building.finish()
            output.emit(
                "built \(path) as of position \(built); serve it with: chorus serve --data \(path) --read-only",
                ["into": path, "position": built.rawValue])
        } catch {
            try? files.removeItem(atPath: path)
            throw error
        }
    }
}
