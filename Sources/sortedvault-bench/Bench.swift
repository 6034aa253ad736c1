import Foundation  // the benchmark client, never installed: String(format:) for its tables needs full Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `sortedvault-bench`: measures the daemon against a running ssh-agent with the same client code.
/// `scripts/bench` builds it in release mode, starts both servers, and runs it; see README.
///
///   sortedvault-bench rpc VAULT_SOCKET AGENT_SOCKET [REQUESTS]
///   sortedvault-bench store VAULT_SOCKET [COUNT]
///   sortedvault-bench fill VAULT_SOCKET COUNT DAEMON_PID
///   sortedvault-bench writers VAULT_SOCKET CLIENTS PER_CLIENT
///   sortedvault-bench provider PORT_FILE [EXPIRES_IN]      (StubProvider: the fleet run's token endpoint)
///   sortedvault-bench fleet save|warm|refresh …             (Fleet: `scripts/bench --fleet`)
///
/// With `BENCH_RESULTS=FILE` each mode also appends its figures to FILE as `key value` lines, for
/// the summary against Benchmarks/targets.toml that `scripts/bench` prints at the end.
@main
struct Bench {
    static func main() throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        switch arguments.first {
        case "rpc" where arguments.count >= 3:
            try rpc(vault: arguments[1], agent: arguments[2], requests: arguments.count > 3 ? Int(arguments[3])! : 20_000)
        case "store" where arguments.count >= 2:
            try durableStore(vault: arguments[1], count: arguments.count > 2 ? Int(arguments[2])! : 2_000,
                             label: arguments.count > 3 ? arguments[3] : "store")
        case "fill" where arguments.count == 4:
            try fill(vault: arguments[1], count: Int(arguments[2])!, pid: Int32(arguments[3])!)
        case "writers" where arguments.count == 4:
            try Writers.run(vault: arguments[1], clients: Int(arguments[2])!, perClient: Int(arguments[3])!)
        case "provider" where arguments.count == 2 || arguments.count == 3:
            try StubProvider.run(portFile: arguments[1], expiresIn: arguments.count == 3 ? try Fleet.number(arguments[2]) : 61)
        case "fleet":
            try Fleet.main(Array(arguments.dropFirst()))
        default:
            FileHandle.standardError.write(Data("usage: sortedvault-bench rpc VAULT AGENT [N] | store VAULT [N [LABEL]] | fill VAULT N PID | writers VAULT CLIENTS N | provider PORT_FILE [EXPIRES_IN] | fleet save|warm|refresh …\n".utf8))
            exit(64)
        }
    }

    static let retrieve = Array(#"{"method":"org.sortedvault.vault.Retrieve","parameters":{"service":"bench","account":"token"}}"#.utf8) + [0]
    /// The start-up check of a login whose access token is valid: answered from the vault, no network.
    /// `scripts/bench` saves that login first (`sortedvault session save bench ada`).
    static let autoLogin = Array(#"{"method":"org.sortedvault.session.AutoLogin","parameters":{"service":"bench","account":"ada"}}"#.utf8) + [0]
    static let getInfo = Array(#"{"method":"org.varlink.service.GetInfo","parameters":{}}"#.utf8) + [0]
    static let identities: [UInt8] = [0, 0, 0, 1, 11]  // SSH2_AGENTC_REQUEST_IDENTITIES

    struct Target {
        let name: String
        let path: String
        let framing: BenchSocket.Framing
        let request: [UInt8]
    }

    static func rpc(vault: String, agent: String, requests: Int) throws {
        // The item the vault serves: a 1 KiB token.
        let seed = Array(#"{"method":"org.sortedvault.vault.Store","parameters":{"service":"bench","account":"token","secret":""#.utf8)
            + Array(Data(repeating: 0x41, count: 1024).base64EncodedString().utf8) + Array(#""}}"#.utf8) + [0]
        _ = try BenchSocket(path: vault, framing: .nulTerminated).roundTrip(seed)

        // BENCH_VAULT_CALL=GetInfo: the daemon's server alone (framing, parsing, dispatch, reply; no
        // policy, vault or log), answered in place of Retrieve (scripts/floor-study).
        let serverOnly = ProcessInfo.processInfo.environment["BENCH_VAULT_CALL"] == "GetInfo"
        let targets = [
            serverOnly ? Target(name: "sortedvault GetInfo", path: vault, framing: .nulTerminated, request: getInfo)
                : Target(name: "sortedvault Retrieve", path: vault, framing: .nulTerminated, request: retrieve),
            Target(name: "sortedvault AutoLogin", path: vault, framing: .nulTerminated, request: autoLogin),
            Target(name: "ssh-agent identities", path: agent, framing: .lengthPrefixed, request: identities),
        ]
        print("| mode | clients | server | p50 µs | p99 µs | requests/s |")
        print("| --- | ---: | --- | ---: | ---: | ---: |")
        var ratios: [String] = []
        for persistent in [true, false] {
            for clients in [1, 16] {
                var results: [Measurement] = []
                for target in targets {
                    let perClient = (persistent ? requests : requests / 4) / clients
                    let measurement = try measure(target, clients: clients, perClient: perClient, persistent: persistent)
                    results.append(measurement)
                    print("| \(persistent ? "persistent" : "connect per request") | \(clients) | \(target.name) | \(fmt(measurement.p50)) | \(fmt(measurement.p99)) | \(Int(measurement.throughput)) |")
                    let key = "rpc.\(persistent ? "persistent" : "connect").\(clients).\(target.name.split(separator: " ").last!)"
                    recordResult(key + ".p50", measurement.p50)
                    recordResult(key + ".throughput", measurement.throughput)
                }
                let peer = results[results.count - 1]
                for (target, result) in zip(targets, results).dropLast() {
                    ratios.append("\(target.name), \(persistent ? "persistent" : "connect-per-request"), \(clients) client(s): latency p50 \(String(format: "%.2f", result.p50 / peer.p50))× ssh-agent, throughput \(String(format: "%.2f", result.throughput / peer.throughput))× ssh-agent")
                }
            }
        }
        print("")
        for line in ratios { print("- " + line) }
    }

    struct Measurement {
        let p50: Double
        let p99: Double
        let throughput: Double
    }

    static func measure(_ target: Target, clients: Int, perClient: Int, persistent: Bool) throws -> Measurement {
        // Warm up.
        let warm = try BenchSocket(path: target.path, framing: target.framing)
        for _ in 0..<200 { _ = try warm.roundTrip(target.request) }

        let latencies = LatencyLog(capacity: clients * perClient)
        let errors = LatencyLog(capacity: 1)
        let start = DispatchTime.now().uptimeNanoseconds
        runClients(clients) { _ in
            do {
                var socket = persistent ? try BenchSocket(path: target.path, framing: target.framing) : nil
                var local: [Double] = []
                local.reserveCapacity(perClient)
                for _ in 0..<perClient {
                    let t0 = DispatchTime.now().uptimeNanoseconds
                    if !persistent { socket = try BenchSocket(path: target.path, framing: target.framing) }
                    _ = try socket!.roundTrip(target.request)
                    local.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1000)
                }
                latencies.append(local)
            } catch {
                errors.append([1])
            }
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        guard errors.values.isEmpty else { throw BenchError("\(target.name): a client failed") }
        let sorted = latencies.values.sorted()
        return Measurement(p50: sorted[sorted.count / 2], p99: sorted[sorted.count * 99 / 100], throughput: Double(sorted.count) / elapsed)
    }

    /// `count` stores of new items, one at a time on one connection; the p50 is recorded as `LABEL.p50`.
    static func durableStore(vault: String, count: Int, label: String) throws {
        let socket = try BenchSocket(path: vault, framing: .nulTerminated)
        let secret = Data(repeating: 0x42, count: 256).base64EncodedString()
        var latencies: [Double] = []
        for i in 0..<count {
            let request = Array(#"{"method":"org.sortedvault.vault.Store","parameters":{"service":"\#(label)","account":"a\#(i)","secret":"\#(secret)"}}"#.utf8) + [0]
            let t0 = DispatchTime.now().uptimeNanoseconds
            _ = try socket.roundTrip(request)
            latencies.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1000)
        }
        latencies.sort()
        print("durable store (synchronous=FULL, acknowledged after fsync), \(count) new items: p50 \(fmt(latencies[count / 2])) µs, p99 \(fmt(latencies[count * 99 / 100])) µs")
        recordResult(label + ".p50", latencies[count / 2])
    }

    static func fill(vault: String, count: Int, pid: Int32) throws {
        let before = rss(pid)
        let socket = try BenchSocket(path: vault, framing: .nulTerminated)
        let secret = Data(repeating: 0x43, count: 512).base64EncodedString()
        for i in 0..<count {
            let request = Array(#"{"method":"org.sortedvault.vault.Store","parameters":{"service":"fill.\#(i % 50)","account":"user-\#(i)","secret":"\#(secret)"}}"#.utf8) + [0]
            _ = try socket.roundTrip(request)
        }
        let list = Array(#"{"method":"org.sortedvault.vault.List","parameters":{}}"#.utf8) + [0]
        _ = try socket.roundTrip(list)
        let after = rss(pid)
        sleep(3)  // the daemon gives freed heap back after 2 s without requests (MemoryTrim)
        let settled = rss(pid)
        print("daemon RSS: \(before / 1024) MiB before, \(after / 1024) MiB with \(count) items (after a full List), \(settled / 1024) MiB 3 s later")
        print("daemon RSS with \(count) items, as /proc/PID/smaps_rollup splits it: \(rollup(pid))")
        recordResult("rss.fresh", Double(before) / 1024)
        recordResult("rss.filled", Double(after) / 1024)
        recordResult("rss.settled", Double(settled) / 1024)
    }

    /// Anonymous (heap, stacks: the daemon's own) against file-backed (code and data of the binary
    /// and libraries, in the page cache, reclaimable and shared) resident memory, in MiB.
    static func rollup(_ pid: Int32) -> String {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/smaps_rollup", encoding: .utf8) else { return "unreadable" }
        func field(_ name: String) -> Int {
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return -1 }
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? -1
        }
        let rss = field("Rss"), anonymous = field("Anonymous")
        return String(format: "%.1f MiB anonymous, %.1f MiB file-backed", Double(anonymous) / 1024, Double(rss - anonymous) / 1024)
    }

    /// VmRSS of `pid` in KiB.
    static func rss(_ pid: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return -1 }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? -1
    }

    static func fmt(_ value: Double) -> String { String(format: "%.1f", value) }
}

/// Collects results from concurrent clients.
final class LatencyLog: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var values: [Double] = []
    init(capacity: Int) { values.reserveCapacity(capacity) }
    func append(_ more: [Double]) { lock.withLock { values += more } }
}
