#if canImport(Glibc)
import Glibc
#endif

/// Names the calling thread for `top -H`, `perf` and debuggers, where Linux shows its first 15 bytes. (Foundation's
/// `Thread.name` does not reach the OS thread on Linux, and Glibc's module leaves out `pthread_setname_np`; a thread
/// may rename itself through `/proc/thread-self/comm`.)
package func setCurrentThreadName(_ name: String) {
    #if os(Linux)
    let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return }
    defer { close(descriptor) }
    let bytes = Array(name.utf8.prefix(15))
    _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    #endif
}
