import Foundation  // the benchmark client, never installed: String(format:) for its tables needs full Foundation

/// `sortedvault-bench writers VAULT CLIENTS PER_CLIENT`: the store rate of `CLIENTS` concurrent
/// clients, each on its own connection storing `PER_CLIENT` new items (256-byte secrets), against
/// one client storing as many alone; and the durable store latency (acknowledged after fsync)
/// under both. The target (Benchmarks/targets.toml) is a multiple of the single-writer rate, which
/// stores that share an fsync (group commit) can meet and one fsync per store cannot.
enum Writers {
    struct Result {
        let storesPerSecond: Double
        let p50: Double
        let p99: Double
    }

    static func run(vault: String, clients: Int, perClient: Int) throws {
        let secret = Data(repeating: 0x42, count: 256).base64EncodedString()
        // The single writer stores a quarter as many, enough for its percentiles, in a quarter of the time.
        let single = try measure(vault: vault, clients: 1, perClient: max(clients * perClient / 4, 200), prefix: "single", secret: secret)
        let many = try measure(vault: vault, clients: clients, perClient: perClient, prefix: "many", secret: secret)
        let ratio = many.storesPerSecond / single.storesPerSecond
        print("single writer: \(Int(single.storesPerSecond)) stores/s; durable store p50 \(Bench.fmt(single.p50)) µs, p99 \(Bench.fmt(single.p99)) µs")
        print("\(clients) writers: \(Int(many.storesPerSecond)) stores/s = \(String(format: "%.2f", ratio))× single writer; durable store p50 \(Bench.fmt(many.p50)) µs, p99 \(Bench.fmt(many.p99)) µs")
        recordResult("writers.single.rate", single.storesPerSecond)
        recordResult("writers.single.p50", single.p50)
        recordResult("writers.many.clients", Double(clients))
        recordResult("writers.many.rate", many.storesPerSecond)
        recordResult("writers.many.p50", many.p50)
        recordResult("writers.many.p99", many.p99)
    }

    static func measure(vault: String, clients: Int, perClient: Int, prefix: String, secret: String) throws -> Result {
        let run = UUID().uuidString.prefix(8)
        let sockets = try (0..<clients).map { _ in try BenchSocket(path: vault, framing: .nulTerminated) }
        let latencies = LatencyLog(capacity: clients * perClient)
        let errors = LatencyLog(capacity: 1)
        let box = SocketBox(sockets)
        let started = DispatchTime.now().uptimeNanoseconds
        runClients(clients) { index in
            var local: [Double] = []
            local.reserveCapacity(perClient)
            do {
                for i in 0..<perClient {
                    let request = Array(#"{"method":"org.sortedvault.vault.Store","parameters":{"service":"writers.\#(prefix).\#(run)","account":"c\#(index)-\#(i)","secret":"\#(secret)"}}"#.utf8) + [0]
                    let t0 = DispatchTime.now().uptimeNanoseconds
                    let reply = try box.sockets[index].roundTripReply(request)
                    guard !reply.contains("\"error\"") else { throw BenchError("a store failed: \(reply)") }
                    local.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1000)
                }
            } catch {
                FileHandle.standardError.write(Data("writer \(index): \(error)\n".utf8))
                errors.append([1])
            }
            latencies.append(local)
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        guard errors.values.isEmpty else { throw BenchError("\(clients) writers: a client failed") }
        let sorted = latencies.values.sorted()
        return Result(storesPerSecond: Double(sorted.count) / elapsed, p50: sorted[sorted.count / 2], p99: sorted[sorted.count * 99 / 100])
    }
}

/// Hands each client thread its own socket.
final class SocketBox: @unchecked Sendable {
    let sockets: [BenchSocket]
    init(_ sockets: [BenchSocket]) { self.sockets = sockets }
}
