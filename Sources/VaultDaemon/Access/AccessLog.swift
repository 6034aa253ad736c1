import AccessLogFile
import VaultCrypto
import FoundationEssentials
import Synchronization
import Logging
import Varlink
import VaultCore
import VaultPolicy

#if canImport(Glibc)
import Glibc
#endif

/// The owner's record of every access decision: when, who (uid, gid, pid, executable), which
/// operation on which service, allowed or denied, and the rule that decided. Never a secret, a
/// token or an account name: a line holds only what is listed here.
///
/// It goes to the journal when systemd runs the daemon (standard error is the journal stream
/// named by `JOURNAL_STREAM`), else to a size-capped, rotated file,
/// `$XDG_STATE_HOME/sortedvault/access.log`, that `sortedvault log` shows.
///
/// A call formats its line and adds it to the pending lines; one writer task writes them in order
/// off the request path, in batches: the first line of a batch wakes it, it lets the batch gather
/// for ``batchWindow`` (100 ms) and writes it with one `write`, then sleeps until the next line. A
/// burst of calls wakes it once, and an idle log arms no timer. A full batch (``batchLines``),
/// ``flush()`` and ``close()`` (at shutdown) end the wait at once; ``flush()`` returns once every line
/// added before it is written. A line is never dropped silently: one that finds ``bufferedLines``
/// waiting, or whose write fails, is counted in ``failedWrites``.
///
/// ```
/// 2026-11-22T18:40:01Z allowed uid=1000 gid=1000 pid=4242 exe="/usr/bin/curl" operation=retrieve service="com.example.api" decision="allowed by rule owner-full-access (access.toml:2)"
/// ```
final class AccessLog: Sendable {
    enum Destination: Sendable {
        case journal
        case file(RotatingLogFile)
    }

    let destination: Destination
    private let clock: any VaultClock
    /// Lines waiting for the writer, at most ``bufferedLines``, and what it is to do next.
    private let pending = Locked(Pending())
    private let writer: Task<Void, Never>
    private let failures: Locked<Int>
    /// Lines a burst may queue ahead of the writer before further lines are counted as failed.
    static let bufferedLines = 4096
    /// A batch this long is written at once, without waiting for the rest of its window.
    static let batchLines = 256
    /// How long the first line of a batch waits for others: the most a line waits to be written.
    static let batchWindow: Duration = .milliseconds(100)

    private struct Pending {
        var lines: [String] = []
        /// Callers of ``flush()`` waiting for the lines added before them.
        var flushes: [CheckedContinuation<Void, Never>] = []
        /// ``close()`` was called: no line is added any more, and the writer ends once it wrote the rest.
        var closed = false
        /// The writer ended: a flush has nothing to wait for.
        var finished = false
        /// Write without waiting for the window: a full batch, a flush or close asked for it.
        var now = false
        /// The writer, when it waits for a first line.
        var idle: CheckedContinuation<Void, Never>?
        /// The writer's wait for the window, when it waits; cancelled to end it early.
        var window: Task<Void, Never>?

        /// Wakes the writer and ends its window: the caller resumes and cancels what this returns,
        /// outside the lock.
        mutating func hurry() -> (CheckedContinuation<Void, Never>?, Task<Void, Never>?) {
            now = true
            defer { idle = nil }
            return (idle, window)
        }
    }
    /// The last timestamp written and its second, so a line costs no date formatting.
    private let lastStamp = Locked<(seconds: Int, text: String)>((-1, ""))
    /// The text of the last peer and of the last decision written: a connection's calls repeat
    /// both, so a line costs no number formatting or quoting for them.
    private let lastParts = Locked(LastParts())
    /// Each program's line budget: a flood is counted and summarised, not written line by line.
    private let budget = Locked(AccessLogBudget())

    private struct LastParts {
        var peer: (uid: UInt32, gid: UInt32, pid: Int32, executable: String?)?
        var peerText = ""
        var decision: Decision?
        var decisionText = ""
    }

    /// Where the lines go, for the daemon's start-up message.
    var location: String {
        switch destination {
        case .journal: return "journal"
        case .file(let file): return file.path
        }
    }

    /// How services are named (``LogNames``): pseudonyms by default in the daemon.
    let names: LogNames

    /// `batchClock` times the batch window. The daemon gives it the real clock even under a test
    /// clock: the window bounds how late a line reaches the disk, which a reader sees in real time.
    init(destination: Destination, clock: any VaultClock, names: LogNames = .plain,
         batchClock: any Clock<Duration> = ContinuousClock()) {
        self.destination = destination
        self.clock = clock
        self.names = names
        let failures = Locked(0)
        self.failures = failures
        writer = Task.detached { [pending] in
            await Self.writeBatches(pending, to: destination, failures: failures, clock: batchClock)
        }
    }

    deinit {
        let (idle, window) = pending.withLock { pending in
            pending.closed = true
            return pending.hurry()
        }
        idle?.resume()
        window?.cancel()
    }

    /// The writer: waits for a first line, lets the batch gather for ``batchWindow`` unless told to
    /// hurry, writes every pending line in one go and answers the flushes that came before them;
    /// after ``close()``, once it wrote the rest, it ends.
    private static func writeBatches(_ pending: Locked<Pending>, to destination: Destination, failures: Locked<Int>,
                                     clock: any Clock<Duration>) async {
        while true {
            await withCheckedContinuation { (wake: CheckedContinuation<Void, Never>) in
                let ready = pending.withLock { pending in
                    guard pending.lines.isEmpty && pending.flushes.isEmpty && !pending.closed else { return true }
                    pending.idle = wake
                    return false
                }
                if ready { wake.resume() }
            }
            let window: Task<Void, Never>? = pending.withLock { pending in
                guard !pending.now else { return nil }
                pending.window = Task { try? await SleeperClock.sleep(for: batchWindow, on: clock) }
                return pending.window
            }
            await window?.value
            let (lines, flushes, closed) = pending.withLock { pending in
                defer {
                    pending.lines.removeAll(keepingCapacity: true)
                    pending.flushes = []
                    pending.now = false
                    pending.window = nil
                }
                return (pending.lines, pending.flushes, pending.closed)
            }
            let failed = write(lines, to: destination)
            if failed > 0 { failures.withLock { $0 += failed } }
            for done in flushes { done.resume() }
            guard closed else { continue }
            // Flushes that came while the last batch was written have nothing more to wait for.
            let late = pending.withLock { pending in
                pending.finished = true
                defer { pending.flushes = [] }
                return pending.flushes
            }
            for done in late { done.resume() }
            return
        }
    }

    /// Lines not written: more than ``bufferedLines`` were waiting, the write failed, or the log was closed.
    var failedWrites: Int { failures.withLock { $0 } }

    /// Returns once every line added before this call is written (or counted as failed).
    func flush() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let (finished, idle, window) = pending.withLock { pending in
                guard !pending.finished else { return (true, nil as CheckedContinuation<Void, Never>?, nil as Task<Void, Never>?) }
                pending.flushes.append(done)
                let (idle, window) = pending.hurry()
                return (false, idle, window)
            }
            if finished { return done.resume() }
            idle?.resume()
            window?.cancel()
        }
    }

    /// Writes every line added so far and stops the writer; later lines are counted as failed.
    func close() async {
        let (idle, window) = pending.withLock { pending in
            pending.closed = true
            return pending.hurry()
        }
        idle?.resume()
        window?.cancel()
        await writer.value
    }

    /// The journal under systemd, else the rotated file at `path`; nil (with a warning) when the
    /// file cannot be opened: the daemon still serves, and says so.
    static func standard(path: String, maxBytes: Int, clock: any VaultClock, names: LogNames, logger: Logger,
                         environment: [String: String] = ProcessInfo.processInfo.environment) -> AccessLog? {
        if stderrIsTheJournal(environment) { return AccessLog(destination: .journal, clock: clock, names: names) }
        do {
            return AccessLog(destination: .file(try RotatingLogFile(path: path, maxBytes: maxBytes)), clock: clock, names: names)
        } catch {
            logger.warning("no access log: \(error)")
            return nil
        }
    }

    /// sd_journal_stream_fd(3): `JOURNAL_STREAM` is "DEVICE:INODE" of the stream standard error
    /// is connected to when systemd set it up; a redirected stderr no longer matches.
    static func stderrIsTheJournal(_ environment: [String: String]) -> Bool {
        guard let value = environment["JOURNAL_STREAM"] else { return false }
        let parts = value.split(separator: ":")
        var info = stat()
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]), fstat(2, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }

    /// One call's decision.
    func record(_ peer: PeerCredentials, operation: String, service: String?, decision: Decision) {
        guard admit(peer, allowed: decision.allowed, operation: operation) else { return }
        let (peerText, decisionText) = lastParts.withLock { last -> (String, String) in
            if last.peer == nil || last.peer! != (peer.uid, peer.gid, peer.pid, peer.executable) {
                last.peer = (peer.uid, peer.gid, peer.pid, peer.executable)
                last.peerText = Self.peerText(peer)
            }
            if last.decision != decision {
                last.decision = decision
                last.decisionText = Self.quoted(decision.description)
            }
            return (last.peerText, last.decisionText)
        }
        write(peerText, operation: operation, service: service, allowed: decision.allowed, quotedWhy: decisionText)
    }

    /// An allowed call that failed in a way the owner must see: a wrong passphrase (`unlock`,
    /// `change-passphrase`), someone guessing. Counted in the refusals' budget.
    func recordFailure(_ peer: PeerCredentials, operation: String, reason: String) {
        guard admit(peer, allowed: false, operation: operation) else { return }
        emit(timestamp() + " failed" + Self.peerText(peer) + " operation=" + Self.quoted(operation)
             + " note=" + Self.quoted(reason) + "\n")
    }

    /// What an allowed owner operation did, for the owner to see later (an export and whom it was
    /// sealed for): `… owner uid=… operation="export" note="…"`. Never a secret in `note`.
    func recordOwnerNote(_ peer: PeerCredentials, operation: String, note: String) {
        emit(timestamp() + " owner" + Self.peerText(peer) + " operation=" + Self.quoted(operation) + " note=" + Self.quoted(note) + "\n")
    }

    /// A connection refused at accept: no rule could ever allow this peer anything.
    func recordRefusedConnection(_ peer: PeerCredentials) {
        guard admit(peer, allowed: false, operation: "connect") else { return }
        write(Self.peerText(peer), operation: "connect", service: nil, allowed: false,
              quotedWhy: Self.quoted("denied: no policy rule admits this peer"))
    }

    /// Takes the line from the program's budget, writing any summary due first; false: count only.
    private func admit(_ peer: PeerCredentials, allowed: Bool, operation: String) -> Bool {
        let program = AccessLogBudget.Program(uid: peer.uid, executable: peer.executable ?? "?")
        let now = clock.now.timeIntervalSince1970
        let verdict = budget.withLock { $0.admit(program, allowed: allowed, operation: operation, at: now) }
        for (program, suppressed) in verdict.summaries { writeSummary(program, suppressed) }
        return verdict.write
    }

    /// Writes the summaries of programs that have been counting for at least `age` seconds (all of
    /// them with 0, at shutdown), so a flood that stopped is reported without waiting for its next line.
    func flushSummaries(olderThan age: Double = 0) {
        let now = clock.now.timeIntervalSince1970
        for (program, suppressed) in budget.withLock({ $0.takeSummaries(olderThan: age, at: now) }) {
            writeSummary(program, suppressed)
        }
    }

    /// `… summary uid=1000 exe="/usr/bin/x" lines=4076 counted="denied lock=4000, denied retrieve=76" since=…`
    private func writeSummary(_ program: AccessLogBudget.Program, _ suppressed: AccessLogBudget.Suppressed) {
        let counted = suppressed.counts.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
        let uid = program == AccessLogBudget.otherPrograms ? "*" : "\(program.uid)"
        let line = timestamp() + " summary uid=" + uid + " exe=" + Self.quoted(program.executable)
            + " lines=\(suppressed.total) counted=" + Self.quoted(counted)
            + " since=" + Self.format(seconds: Int(suppressed.since.rounded(.down)))
            + " note=" + Self.quoted("over this program's line budget: counted, not written one by one") + "\n"
        emit(line)
    }

    private static func peerText(_ peer: PeerCredentials) -> String {
        OwnerActionLog.peerText(uid: peer.uid, gid: peer.gid, pid: peer.pid, executable: peer.executable)
    }

    private func write(_ peerText: String, operation: String, service: String?, allowed: Bool, quotedWhy: String) {
        var line = timestamp() + (allowed ? " allowed" : " denied")
        line += peerText
        line += " operation=" + Self.quoted(operation)
        if let service { line += " service=" + names.field(service) }
        line += " decision=" + quotedWhy + "\n"
        emit(line)
    }

    /// Adds a line for the writer: the first of a batch wakes it, a full batch ends its window.
    private func emit(_ line: String) {
        let (added, idle, window) = pending.withLock { pending -> (Bool, CheckedContinuation<Void, Never>?, Task<Void, Never>?) in
            guard !pending.closed, pending.lines.count < Self.bufferedLines else { return (false, nil, nil) }
            pending.lines.append(line)
            if pending.lines.count >= Self.batchLines {
                let (idle, window) = pending.hurry()
                return (true, idle, window)
            }
            defer { pending.idle = nil }
            return (true, pending.idle, nil)
        }
        guard added else { return failures.withLock { $0 += 1 } }
        idle?.resume()
        window?.cancel()
    }

    /// Writes a batch where the log goes, with one `write`; returns how many lines were not written whole.
    private static func write(_ lines: [String], to destination: Destination) -> Int {
        guard !lines.isEmpty else { return 0 }
        switch destination {
        case .journal:
            // journald splits the stream at newlines: each line keeps its own prefix.
            var bytes: [UInt8] = []
            for line in lines { bytes += "sortedvault access: ".utf8; bytes += line.utf8 }
            let written = bytes.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
            return written == bytes.count ? 0 : lines.count
        case .file(let file):
            return file.append(lines: lines)
        }
    }

    /// The call's time in UTC, `2026-11-22T18:40:01Z` (what `Date.formatted(.iso8601)` writes),
    /// formatted once per second: a line is written for every call, on the request path.
    private func timestamp() -> String {
        let seconds = Int(clock.now.timeIntervalSince1970.rounded(.down))
        if let cached = lastStamp.withLock({ $0.seconds == seconds ? $0.text : nil }) { return cached }
        let text = Self.format(seconds: seconds)
        lastStamp.withLock { $0 = (seconds, text) }
        return text
    }

    /// `seconds` since the epoch as `2026-11-22T18:40:01Z`.
    static func format(seconds: Int) -> String { OwnerActionLog.timestamp(seconds: seconds) }

    /// One field between quotes, escaped at write time (``LogText``): a program's path or a name
    /// can neither end the line nor carry control or bidirectional characters to the terminal.
    static func quoted(_ text: String) -> String {
        LogText.quoted(text)
    }
}
