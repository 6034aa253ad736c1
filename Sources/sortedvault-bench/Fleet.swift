import Foundation  // the benchmark client, never installed: String(format:) for its tables needs full Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `sortedvault-bench fleet …`: the client side of `scripts/bench --fleet`, daemons sharing logins
/// through PostgreSQL with ``StubProvider`` as their token endpoint.
///
///   fleet save PROVIDER_PORT SERVICE COUNT EXPIRES_IN SOCKET...
///   fleet warm SOCKET [REQUESTS]
///   fleet refresh PROVIDER_PORT SECONDS LOGINS CLIENTS SOCKET...
///
/// `save` stores COUNT logins (accounts u0…) through the daemons' sockets in turn, each from a token
/// response the stub issued. `warm` times AutoLogin of a login whose token is valid (`fleet.warm`,
/// account `u0`), persistent connections, 1 and 16 clients. `refresh` has CLIENTS clients, spread
/// over the sockets, call AutoLogin on random logins of `fleet.refresh` for SECONDS; the stub's
/// counts say how many refreshes that made, and whether any refresh token was used twice.
enum Fleet {
    static let warmService = "fleet.warm"
    static let refreshService = "fleet.refresh"

    static func main(_ arguments: [String]) throws {
        switch arguments.first {
        case "save" where arguments.count >= 6:
            try save(port: try number(arguments[1]), service: arguments[2], count: try number(arguments[3]),
                     expiresIn: try number(arguments[4]), sockets: Array(arguments[5...]))
        case "warm" where arguments.count >= 2:
            try warm(socket: arguments[1], requests: arguments.count > 2 ? try number(arguments[2]) : 20_000)
        case "refresh" where arguments.count >= 6:
            try refresh(port: try number(arguments[1]), seconds: try number(arguments[2]), logins: try number(arguments[3]),
                        clients: try number(arguments[4]), sockets: Array(arguments[5...]))
        default:
            throw BenchError("usage: sortedvault-bench fleet save PORT SERVICE COUNT EXPIRES_IN SOCKET... | warm SOCKET [N] | refresh PORT SECONDS LOGINS CLIENTS SOCKET...")
        }
    }

    static func save(port: Int, service: String, count: Int, expiresIn: Int, sockets: [String]) throws {
        let threads = min(8, count)
        let failures = LatencyLog(capacity: 1)
        runClients(threads) { index in
            do {
                let connections = try sockets.map { try BenchSocket(path: $0, framing: .nulTerminated) }
                for login in stride(from: index, to: count, by: threads) {
                    let tokenResponse = try StubControl.issue(port: port, expiresIn: expiresIn)
                    let request = Array(#"{"method":"org.sortedvault.session.Save","parameters":{"service":"\#(service)","account":"u\#(login)","tokenResponse":\#(tokenResponse),"provider":{"tokenEndpoint":"http://127.0.0.1:\#(port)/token","clientId":"bench"}}}"#.utf8) + [0]
                    let reply = try connections[login % connections.count].roundTripReply(request)
                    if let error = value(of: "error", in: reply) { throw BenchError("Save of login u\(login) failed: \(error)") }
                }
            } catch {
                FileHandle.standardError.write(Data("fleet save: \(error)\n".utf8))
                failures.append([1])
            }
        }
        guard failures.values.isEmpty else { throw BenchError("fleet save: \(failures.values.count) of \(threads) savers failed") }
    }

    static func warm(socket: String, requests: Int) throws {
        let request = autoLogin(service: warmService, account: "u0")
        let probe = try BenchSocket(path: socket, framing: .nulTerminated)
        let first = outcome(of: try probe.roundTripReply(request))
        guard first == "valid" else { throw BenchError("the warm login answered \(first), not valid: it must be saved with a long-lived token first") }
        let target = Bench.Target(name: "fleet AutoLogin", path: socket, framing: .nulTerminated, request: request)
        print("| clients | AutoLogin p50 µs | p99 µs | requests/s |")
        print("| ---: | ---: | ---: | ---: |")
        for clients in [1, 16] {
            let measurement = try Bench.measure(target, clients: clients, perClient: requests / clients, persistent: true)
            print("| \(clients) | \(Bench.fmt(measurement.p50)) | \(Bench.fmt(measurement.p99)) | \(Int(measurement.throughput)) |")
            recordResult("fleet.warm.\(clients).p50", measurement.p50)
            recordResult("fleet.warm.\(clients).p99", measurement.p99)
            recordResult("fleet.warm.\(clients).throughput", measurement.throughput)
        }
        let last = outcome(of: try probe.roundTripReply(request))
        guard last == "valid" else { throw BenchError("the warm login answered \(last) after the run, not valid") }
    }

    static func refresh(port: Int, seconds: Int, logins: Int, clients: Int, sockets: [String]) throws {
        let requests = (0..<logins).map { autoLogin(service: refreshService, account: "u\($0)") }
        let log = RefreshLog()
        let before = try StubControl.counts(port: port)
        let started = DispatchTime.now().uptimeNanoseconds
        let deadline = started + UInt64(seconds) * 1_000_000_000
        let windows = WindowSampler(port: port, start: before, startedAt: started, deadline: deadline)
        runClients(clients) { index in
            do {
                let socket = try BenchSocket(path: sockets[index % sockets.count], framing: .nulTerminated)
                var random = SplitMix(seed: UInt64(index + 1) &* 0x9E37_79B9_7F4A_7C15 ^ started)
                var latencies: [Double] = []
                var outcomes: [String: Int] = [:]
                while DispatchTime.now().uptimeNanoseconds < deadline {
                    let request = requests[Int(random.next() % UInt64(logins))]
                    let t0 = DispatchTime.now().uptimeNanoseconds
                    let reply = try socket.roundTripReply(request)
                    latencies.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1000)
                    outcomes[outcome(of: reply), default: 0] += 1
                }
                log.add(latencies, outcomes)
            } catch {
                log.fail("client \(index): \(error)")
            }
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        let counts = try StubControl.counts(port: port) - before
        let lowest = windows.finish()
        guard log.failures.isEmpty else { throw BenchError("fleet refresh: \(log.failures.joined(separator: "; "))") }
        let sorted = log.latencies.sorted()
        let rate = Double(counts.refreshes) / elapsed
        let key = "fleet.refresh.\(sockets.count)"
        let outcomes = log.outcomes.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        print("\(sockets.count) daemon(s), \(clients) clients, \(Int(elapsed)) s: \(Int(rate)) refreshes/s "
              + "(lowest \(WindowSampler.seconds) s window: \(lowest.map { String(Int($0)) } ?? "n/a")), "
              + "\(counts.doubleRefreshes) double refreshes, \(counts.invalidGrants) invalid_grant; "
              + "\(sorted.count) AutoLogin calls (\(outcomes)), p50 \(ms(sorted[sorted.count / 2])) ms, p99 \(ms(sorted[sorted.count * 99 / 100])) ms")
        recordResult(key + ".rate", rate)
        recordResult(key + ".refreshes", Double(counts.refreshes))
        recordResult(key + ".window_min", lowest ?? rate)
        recordResult(key + ".double", Double(counts.doubleRefreshes))
        recordResult(key + ".invalid_grant", Double(counts.invalidGrants))
        recordResult(key + ".calls", Double(sorted.count))
        recordResult(key + ".p50", sorted[sorted.count / 2])
        recordResult(key + ".p99", sorted[sorted.count * 99 / 100])
        recordResult(key + ".client_cpu", processCPUSeconds())
    }

    /// The CPU time this process used (user and system, /proc/self/stat), so the run can say how
    /// much of the two cores the clients took from the daemons.
    static func processCPUSeconds() -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
              let end = stat.lastIndex(of: ")") else { return -1 }
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        // After the command's closing parenthesis: state is field 3, utime 14 and stime 15.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return -1 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    static func autoLogin(service: String, account: String) -> [UInt8] {
        Array(#"{"method":"org.sortedvault.session.AutoLogin","parameters":{"service":"\#(service)","account":"\#(account)"}}"#.utf8) + [0]
    }

    /// What a reply says, without its grant: the varlink error's name, or the outcome (with the
    /// reason when there is one).
    static func outcome(of reply: String) -> String {
        if let error = value(of: "error", in: reply) { return error }
        guard let outcome = value(of: "outcome", in: reply) else { return "unreadable reply" }
        return value(of: "reason", in: reply).map { "\(outcome) (\($0))" } ?? outcome
    }

    /// The string value of the first member named `name`; nil when there is none or it is not a string.
    static func value(of name: String, in reply: String) -> String? {
        guard let key = reply.range(of: "\"\(name)\"") else { return nil }
        let rest = reply[key.upperBound...].drop { $0 == " " || $0 == ":" }
        guard rest.first == "\"" else { return nil }
        return String(rest.dropFirst().prefix { $0 != "\"" })
    }

    static func number(_ text: String) throws -> Int {
        guard let value = Int(text), value >= 0 else { throw BenchError("\(text.debugDescription) is not a count") }
        return value
    }

    static func ms(_ microseconds: Double) -> String { String(format: "%.2f", microseconds / 1000) }
}

/// The refresh clients' latencies, outcomes and failures, gathered from their threads.
final class RefreshLog: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var latencies: [Double] = []
    private(set) var outcomes: [String: Int] = [:]
    private(set) var failures: [String] = []

    func add(_ more: [Double], _ counted: [String: Int]) {
        lock.withLock {
            latencies += more
            outcomes.merge(counted, uniquingKeysWith: +)
        }
    }

    func fail(_ text: String) { lock.withLock { failures.append(text) } }
}

/// Reads the stub's counts every ``seconds`` on a thread of its own while the clients run, so
/// "sustained" is the lowest refresh rate of any window, not only the mean over the run.
final class WindowSampler: @unchecked Sendable {
    static let seconds = 10
    private let done = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var lowest: Double?

    init(port: Int, start: StubControl.Counts, startedAt: UInt64, deadline: UInt64) {
        let thread = Thread { [self] in
            var previous = start
            var windowEnd = startedAt + UInt64(Self.seconds) * 1_000_000_000
            while windowEnd <= deadline {
                let now = DispatchTime.now().uptimeNanoseconds
                if windowEnd > now { Thread.sleep(forTimeInterval: Double(windowEnd - now) / 1e9) }
                guard let counts = try? StubControl.counts(port: port) else { break }
                let rate = Double(counts.refreshes - previous.refreshes) / Double(Self.seconds)
                lock.withLock { lowest = min(lowest ?? rate, rate) }
                previous = counts
                windowEnd += UInt64(Self.seconds) * 1_000_000_000
            }
            done.signal()
        }
        thread.start()
    }

    /// Waits for the last window; the lowest rate seen, nil when the run was shorter than a window.
    func finish() -> Double? {
        done.wait()
        return lock.withLock { lowest }
    }
}

/// A small, fast generator for picking logins (SplitMix64): no system call per pick.
struct SplitMix {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
