// swift-tools-version: 6.1
import PackageDescription

// libFuzzer targets for every parser that reads outside input, kept in their own package (as
// swift-protobuf keeps `FuzzTesting/`) so that a build in the repository root never builds them.
// Each target is an executable: its `main.swift` hands libFuzzer (`LLVMFuzzerRunDriver`) the
// function under test, also exported as `LLVMFuzzerTestOneInput`. Build and run them with
// `scripts/fuzz TARGET SECONDS`, which passes `-sanitize=fuzzer,address` to every module, so the
// parsers in the parent package are instrumented too (docs/testing.md, "Fuzzing").
let package = Package(
    name: "sortedvault-fuzz",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "sortedvault", path: ".."),
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.3"),
    ],
    targets: [
        // The checks every target shares.
        .target(name: "FuzzSupport", dependencies: ["CLibFuzzer"], path: "Sources/FuzzSupport"),
        .target(name: "CLibFuzzer", path: "Sources/CLibFuzzer"),
        .executableTarget(
            name: "FuzzJSON",
            dependencies: ["FuzzSupport", .product(name: "BoundedJSON", package: "sortedvault")],
            path: "Sources/FuzzJSON"
        ),
        .executableTarget(
            name: "FuzzVarlink",
            dependencies: [
                "FuzzSupport",
                .product(name: "Varlink", package: "sortedvault"),
                .product(name: "BoundedJSON", package: "sortedvault"),
                .product(name: "VaultCrypto", package: "sortedvault"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Sources/FuzzVarlink"
        ),
        .executableTarget(
            name: "FuzzPolicy",
            dependencies: ["FuzzSupport", .product(name: "VaultPolicy", package: "sortedvault")],
            path: "Sources/FuzzPolicy"
        ),
        .executableTarget(
            name: "FuzzGitCredential",
            dependencies: [
                "FuzzSupport",
                .product(name: "CredentialHelpers", package: "sortedvault"),
                .product(name: "VaultCrypto", package: "sortedvault"),
            ],
            path: "Sources/FuzzGitCredential"
        ),
        .executableTarget(
            name: "FuzzDockerCredential",
            dependencies: [
                "FuzzSupport",
                .product(name: "CredentialHelpers", package: "sortedvault"),
                .product(name: "VaultCrypto", package: "sortedvault"),
                // The round trip runs the helper against the in-memory store and reads its JSON back.
                .product(name: "VaultTesting", package: "sortedvault"),
                .product(name: "BoundedJSON", package: "sortedvault"),
            ],
            path: "Sources/FuzzDockerCredential"
        ),
        .executableTarget(
            name: "FuzzTokenResponse",
            dependencies: [
                "FuzzSupport",
                .product(name: "VaultSession", package: "sortedvault"),
                .product(name: "VaultCrypto", package: "sortedvault"),
            ],
            path: "Sources/FuzzTokenResponse"
        ),
        .executableTarget(
            name: "FuzzOIDC",
            dependencies: [
                "FuzzSupport",
                .product(name: "VaultOIDC", package: "sortedvault"),
                .product(name: "VaultCrypto", package: "sortedvault"),
            ],
            path: "Sources/FuzzOIDC"
        ),
        .executableTarget(
            name: "FuzzSealedRecord",
            dependencies: [
                "FuzzSupport",
                .product(name: "Vault", package: "sortedvault"),
                .product(name: "VaultCore", package: "sortedvault"),
                .product(name: "VaultCrypto", package: "sortedvault"),
            ],
            path: "Sources/FuzzSealedRecord"
        ),
    ]
)
