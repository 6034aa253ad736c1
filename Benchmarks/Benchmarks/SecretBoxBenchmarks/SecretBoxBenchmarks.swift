import Benchmark
import VaultCrypto

/// Seal and open of an item-sized secret: every store seals once, every retrieve opens once.
/// 64 B is a token or password; 1 KiB is what `scripts/bench` stores.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .instructions, .mallocCountTotal, .throughput],
        timeUnits: .nanoseconds,
        scalingFactor: .kilo,
        maxDuration: .seconds(2)
    )
    let key = SecureBytes(randomCount: SecretBox.keyCount)
    for size in [64, 1024] {
        let message = [UInt8](repeating: 0x5A, count: size)
        let sealed = try! SecretBox.seal(message, key: key)

        Benchmark("secretbox seal \(size) B") { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try! SecretBox.seal(message, key: key))
            }
        }
        Benchmark("secretbox open \(size) B") { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(try! SecretBox.open(sealed, key: key))
            }
        }
    }
}
