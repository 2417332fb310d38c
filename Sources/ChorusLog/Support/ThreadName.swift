import Foundation

/// Names the calling thread for `top -H`, `perf` and debuggers. Set from inside the thread: on Linux, naming a
/// `Thread` before it starts does not reach the OS thread. Linux keeps 15 bytes of it.
func setCurrentThreadName(_ name: String) {
    Thread.current.name = name
}
