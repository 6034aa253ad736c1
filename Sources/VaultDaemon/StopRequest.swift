import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Why the daemon should stop — SIGTERM, SIGINT, or its socket no longer being its own — kept
/// once: the first reason wins and ``wait()`` returns it; later requests are ignored.
///
/// ```swift
/// let stop = StopRequest()
/// stop.listenForTerminationSignals()
/// let reason = await stop.wait()   // "signal 15", "the socket … was removed"
/// ```
public final class StopRequest: Sendable {
    private struct State {
        var reason: String?
        var waiters: [CheckedContinuation<String, Never>] = []
    }
    private let state = Mutex(State())
    private let sources = SignalSources()

    public init() {}

    /// Records `reason` if it is the first, and wakes every waiter.
    public func request(_ reason: String) {
        let waiters = state.withLock { state -> [CheckedContinuation<String, Never>] in
            guard state.reason == nil else { return [] }
            state.reason = reason
            defer { state.waiters = [] }
            return state.waiters
        }
        waiters.forEach { $0.resume(returning: reason) }
    }

    /// The first reason given, once there is one.
    public func wait() async -> String {
        await withCheckedContinuation { continuation in
            let reason = state.withLock { state -> String? in
                if state.reason == nil { state.waiters.append(continuation) }
                return state.reason
            }
            if let reason { continuation.resume(returning: reason) }
        }
    }

    /// SIGTERM and SIGINT request a stop instead of killing the process.
    func listenForTerminationSignals() {
        let queue = DispatchQueue(label: "sortedvault.signals")
        for number in [SIGTERM, SIGINT] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [self] in request("signal \(number)") }
            source.resume()
            sources.keep(source)
        }
    }
}

/// Keeps signal sources alive for the process's lifetime (they stop when released).
private final class SignalSources: @unchecked Sendable {
    private var sources: [any DispatchSourceSignal] = []
    private let lock = NSLock()

    func keep(_ source: any DispatchSourceSignal) { lock.withLock { sources.append(source) } }
}
