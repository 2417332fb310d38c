import Foundation

/// The CPU time processes have used (user + system), read from `/proc/<pid>/stat`: what a run cost each kind of
/// process when they all share one machine.
enum ProcessCPU {
    private static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// Seconds of CPU the process has used so far; 0 if it is gone.
    static func seconds(of pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return 0 }
        return seconds(inStat: stat)
    }

    /// Seconds of CPU used so far by the running processes whose command name is `name` (`postgres`: the server and
    /// its backends). Processes that ended since are not counted, so sample around a run whose processes stay up.
    static func seconds(ofProcessesNamed name: String) -> Double {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        var total = 0.0
        for entry in entries where entry.allSatisfy(\.isNumber) {
            guard let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                stat.contains("(\(name))")
            else { continue }
            total += seconds(inStat: stat)
        }
        return total
    }

    /// utime and stime, fields 14 and 15; counted after the command name, which is in parentheses and may hold spaces.
    private static func seconds(inStat stat: String) -> Double {
        guard let close = stat.lastIndex(of: ")") else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is the state, field 3.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / ticksPerSecond
    }
}
