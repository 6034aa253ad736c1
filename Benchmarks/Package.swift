// swift-tools-version: 6.1
import PackageDescription

// In-process micro-benchmarks (ordo-one/benchmark), kept in their own package so that
// `swift build --build-tests` in the repository root never builds them or their dependencies.
// Run them with `scripts/microbench` (or `swift package benchmark` in this folder).
// The plugin finds each suite in `Benchmarks/<target>/`, as its documentation asks.
let package = Package(
    name: "sortedvault-benchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "sortedvault", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.3"),
    ],
    targets: [
        // libsodium secretbox seal/open of 64 B and 1 KiB.
        .executableTarget(
            name: "SecretBoxBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "VaultCrypto", package: "sortedvault"),
            ],
            path: "Benchmarks/SecretBoxBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // Varlink framing and messages: a Retrieve call and its reply, parsed and written.
        .executableTarget(
            name: "VarlinkWireBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Varlink", package: "sortedvault"),
                .product(name: "VaultAPI", package: "sortedvault"),
                .product(name: "VaultCrypto", package: "sortedvault"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Benchmarks/VarlinkWireBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // EncryptedVault over SQLiteSealedStorage on a real temp file: retrieve of an existing item.
        .executableTarget(
            name: "RetrievePathBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Vault", package: "sortedvault"),
                .product(name: "VaultSQLite", package: "sortedvault"),
                .product(name: "VaultCore", package: "sortedvault"),
                .product(name: "VaultCrypto", package: "sortedvault"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Benchmarks/RetrievePathBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
