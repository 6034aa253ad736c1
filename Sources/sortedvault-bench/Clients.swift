import Foundation  // the benchmark client, never installed: String(format:) for its tables needs full Foundation

/// Runs `body(index)` on `count` threads of their own, all released at once, and waits for all.
///
/// Each simulated client needs its own thread: `DispatchQueue.concurrentPerform` runs at most as
/// many iterations at a time as there are CPUs (2 here), so "16 clients" on it were 2 at a time.
func runClients(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let start = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    for index in 0..<count {
        done.enter()
        let thread = Thread {
            start.wait()
            body(index)
            done.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    for _ in 0..<count { start.signal() }
    done.wait()
}

/// Appends `key value` lines to the file `BENCH_RESULTS` names, for `scripts/bench`'s summary of
/// the targets; does nothing when it is unset.
func recordResult(_ key: String, _ value: Double) {
    guard let path = ProcessInfo.processInfo.environment["BENCH_RESULTS"],
          let handle = FileHandle(forWritingAtPath: path) ?? {
              _ = FileManager.default.createFile(atPath: path, contents: nil)
              return FileHandle(forWritingAtPath: path)
          }() else { return }
    handle.seekToEndOfFile()
    handle.write(Data("\(key) \(value)\n".utf8))
    try? handle.close()
}
