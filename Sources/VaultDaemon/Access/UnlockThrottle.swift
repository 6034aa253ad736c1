import VaultCrypto
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import VaultCore

/// Slows down passphrase guessing, as ssh-agent does after failed unlocks, per peer process: after
/// a peer's n-th failure in a row its next attempt must wait `base · 2^(n-1)` seconds, capped at
/// `maximum`. One client's failures never make another client wait, so a misbehaving app cannot
/// lock the owner out.
///
/// An attempt is reserved before the passphrase is derived and settled after: while a peer has
/// one in flight, its other attempts are refused at once, so parallel calls cannot all slip into
/// the same window. Time comes from the injected clock, so tests drive it without sleeping.
///
/// ```swift
/// guard let attempt = throttle.reserve(for: peer) else { … }   // wait: throttle.retryAfter(for:)
/// defer { throttle.settle(attempt, succeeded: ok) }
/// ```
final class UnlockThrottle: Sendable {
    /// Who is throttled: a process, told apart from a later process with the same pid by its start time.
    struct Peer: Hashable, Sendable {
        let uid: UInt32
        let pid: Int32
        let started: UInt64

        init(uid: UInt32, pid: Int32) {
            self.uid = uid
            self.pid = pid
            started = Self.startTime(of: pid)
        }

        /// Field 22 of /proc/PID/stat (clock ticks after boot); 0 when unreadable.
        private static func startTime(of pid: Int32) -> UInt64 {
            guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = text.lastIndex(of: ")") else { return 0 }
            let fields = text[text.index(after: close)...].split(separator: " ")
            return fields.count > 19 ? UInt64(fields[19]) ?? 0 : 0
        }
    }

    /// A reserved attempt; settle it exactly once.
    struct Attempt: Sendable { let peer: Peer }

    private struct PeerState {
        var failures = 0
        var notBefore: Date?
        var inFlight = false
    }
    private struct State {
        var peers: [Peer: PeerState] = [:]
    }

    private let clock: any VaultClock
    private let base: TimeInterval
    private let maximum: TimeInterval
    /// Peers remembered at most; past it, those whose wait is over are forgotten first.
    private let capacity: Int
    private let state = Locked(State())

    init(clock: any VaultClock, base: TimeInterval = 1, maximum: TimeInterval = 60, capacity: Int = 1024) {
        self.clock = clock
        self.base = base
        self.maximum = maximum
        self.capacity = capacity
    }

    /// Reserves an attempt for `peer`, or returns nil when it must wait (see ``retryAfter(for:)``).
    func reserve(for peer: Peer) -> Attempt? {
        let now = clock.now
        return state.withLock { state -> Attempt? in
            var entry = state.peers[peer] ?? PeerState()
            if entry.inFlight { return nil }
            if let notBefore = entry.notBefore, notBefore > now { return nil }
            entry.inFlight = true
            if state.peers[peer] == nil { Self.makeRoom(&state, capacity: capacity, now: now) }
            state.peers[peer] = entry
            return Attempt(peer: peer)
        }
    }

    /// Seconds `peer` should wait before its next attempt (at least `base` while one is in flight).
    func retryAfter(for peer: Peer) -> TimeInterval {
        let now = clock.now
        return state.withLock { state in
            guard let entry = state.peers[peer] else { return 0 }
            let waiting = entry.notBefore.map { max(0, $0.timeIntervalSince(now)) } ?? 0
            return entry.inFlight ? max(waiting, base) : waiting
        }
    }

    /// Ends a reserved attempt: a success forgets the peer's failures, a failure lengthens its wait.
    func settle(_ attempt: Attempt, succeeded: Bool) {
        let now = clock.now
        state.withLock { state in
            guard var entry = state.peers[attempt.peer] else { return }
            entry.inFlight = false
            if succeeded {
                state.peers[attempt.peer] = nil
                return
            }
            entry.failures += 1
            entry.notBefore = now.addingTimeInterval(min(maximum, base * pow(2, Double(min(entry.failures, 32) - 1))))
            state.peers[attempt.peer] = entry
        }
    }

    /// Ends a reserved attempt that never reached the passphrase check (bad input, an I/O error).
    func release(_ attempt: Attempt) {
        state.withLock { state in
            guard var entry = state.peers[attempt.peer] else { return }
            entry.inFlight = false
            state.peers[attempt.peer] = entry.failures == 0 ? nil : entry
        }
    }

    /// How many peers are remembered (bounded by `capacity` plus attempts in flight).
    var trackedPeers: Int { state.withLock { $0.peers.count } }

    /// Bounded memory: forgets peers that may try again anyway, else the one whose wait ends first.
    private static func makeRoom(_ state: inout State, capacity: Int, now: Date) {
        guard state.peers.count >= capacity else { return }
        let idle = state.peers.filter { !$0.value.inFlight && ($0.value.notBefore ?? .distantPast) <= now }.map(\.key)
        idle.forEach { state.peers[$0] = nil }
        if state.peers.count >= capacity,
           let first = state.peers.filter({ !$0.value.inFlight }).min(by: { ($0.value.notBefore ?? .distantPast) < ($1.value.notBefore ?? .distantPast) }) {
            state.peers[first.key] = nil
        }
    }
}
