// swift-tools-version: 6.1
import PackageDescription

// Dependencies point one way: CSodium ← VaultCrypto ← VaultCore ← Vault ← VaultSQLite ← executables.
// VaultCrypto is the only importer of libsodium; VaultSQLite sees only ciphertext.
let package = Package(
    name: "sortedvault",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "VaultCore", targets: ["VaultCore"]),
        .library(name: "Vault", targets: ["Vault"]),
        .library(name: "VaultSQLite", targets: ["VaultSQLite"]),
        .library(name: "VaultTesting", targets: ["VaultTesting"]),
        .executable(name: "sortedvault-demo", targets: ["sortedvault-demo"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]
        ),
        .target(name: "VaultCrypto", dependencies: ["CSodium"]),
        .target(name: "VaultCore", dependencies: ["VaultCrypto"]),
        .target(name: "Vault", dependencies: ["VaultCore", "VaultCrypto"]),
        .target(
            name: "VaultSQLite",
            dependencies: ["Vault", "VaultCore", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .target(name: "VaultTesting", dependencies: ["VaultCore", "VaultCrypto"]),
        .executableTarget(
            name: "sortedvault-demo",
            dependencies: ["Vault", "VaultSQLite", "VaultCore", "VaultCrypto"]
        ),
        .testTarget(name: "VaultCryptoTests", dependencies: ["VaultCrypto"]),
        .testTarget(
            name: "VaultTests",
            dependencies: [
                "Vault", "VaultSQLite", "VaultCore", "VaultCrypto", "VaultTesting",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            resources: [.copy("Fixtures")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
