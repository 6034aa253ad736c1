// swift-tools-version: 6.1
import PackageDescription

// Dependencies point one way: CSodium ← VaultCrypto ← VaultCore ← Vault ← VaultSQLite ← executables;
// VaultCore ← VaultSession (the OAuth2 login logic, no I/O) ← VaultOAuthHTTP (AsyncHTTPClient) ← VaultDaemon;
// VaultCore ← VaultOIDC (id-token verification, no I/O) ← VaultOAuthHTTP.
// VaultCrypto is the only importer of libsodium; VaultSQLite sees only ciphertext.
// Varlink (the socket protocol) and VaultPolicy (access rules) know nothing of crypto or storage;
// VaultDaemon wires them to a vault, VaultClient speaks the protocol, DaemonCommands runs the daemon
// (in `sortedvault-cli`), VaultFleet adds the fleet's PostgreSQL store for `sortedvault-fleet-daemon`
// only (the one-host daemon links no database client), and the lean `sortedvault` front talks to the
// daemon only (no Foundation, no NIO, for a short start-up).
// No dynamic symbol table of the programs' own functions: the toolchain's static-stdlib-args.lnk
// links every Swift program with `-export-dynamic`, which put 41,000 symbols (3.9 MB of .dynsym,
// .dynstr and .gnu.hash, 11% of sortedvault-cli stripped) in the table, where no one looks them up:
// nothing dlopens the programs, and strip cannot remove them. Our flags come after that file on the
// link line, so the last word is ours.
let noExportedSymbols: [LinkerSetting] = [
    .unsafeFlags(["-Xlinker", "--no-export-dynamic"], .when(platforms: [.linux])),
]
// The functions that serving a call runs (packaging/request-path.order, written by
// scripts/order-functions) first in the daemon's code, together: a fresh daemon's first calls then map
// 4.3 MB of it, not 9-14 MB spread over the program (docs/speed.md, "Code layout"). It takes
// effect in the release build, whose functions have sections of their own (scripts/lib/release-flags);
// a name the build no longer has is skipped.
let requestPathFirst: [LinkerSetting] = [
    .unsafeFlags(["-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/packaging/request-path.order",
                  "-Xlinker", "--no-warn-symbol-ordering"], .when(platforms: [.linux])),
]
// The daemon (sortedvault-cli) is linked by lld with packed relative relocations (DT_RELR, glibc 2.36 and later): a
// position-independent Swift binary carries one relocation per absolute pointer in its metadata,
// 112,000 in the static daemon, which the loader reads (2.7 MB of the file) and applies at every start.
// Packed, they take 40 KB: 4.6 MiB less resident in a fresh daemon (docs/speed.md, "Linking"). lld
// comes with every Swift toolchain for Linux. Not the lean front: linked so, it started 0.15 ms slower
// (lld's extra read-only segment), and its relocations cost little. `-z now` binds every symbol at
// start: no lazy binding runs after start-up, whose code the daemon then unmaps (docs/speed.md,
// "Memory: code pages and page caches"), and the GOT is read-only (full RELRO).
let packedRelocations: [LinkerSetting] = [
    .unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "-z", "-Xlinker", "now"], .when(platforms: [.linux])),
] + noExportedSymbols + requestPathFirst

let package = Package(
    name: "sortedvault",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "VaultCore", targets: ["VaultCore"]),
        .library(name: "Vault", targets: ["Vault"]),
        .library(name: "VaultSQLite", targets: ["VaultSQLite"]),
        .library(name: "VaultTesting", targets: ["VaultTesting"]),
        .library(name: "VaultClient", targets: ["VaultClient"]),
        .library(name: "VaultSession", targets: ["VaultSession"]),
        .library(name: "VaultOAuthHTTP", targets: ["VaultOAuthHTTP"]),
        .library(name: "VaultOIDC", targets: ["VaultOIDC"]),
        // What an app imports: `SortedVault.login(service:account:)` and the login API underneath.
        .library(name: "SortedVault", targets: ["SortedVault"]),
        // For the micro-benchmarks in `Benchmarks/` (their own package, so a plain build skips them).
        .library(name: "VaultCrypto", targets: ["VaultCrypto"]),
        .library(name: "Varlink", targets: ["Varlink"]),
        // For the libFuzzer targets in `Fuzz/` (their own package): the parsers of outside input.
        .library(name: "BoundedJSON", targets: ["BoundedJSON"]),
        .library(name: "VaultPolicy", targets: ["VaultPolicy"]),
        .library(name: "CredentialHelpers", targets: ["CredentialHelpers"]),
        // The typed messages of both interfaces, Foundation- and NIO-free: the lean CLI links it.
        .library(name: "VaultAPI", targets: ["VaultAPI"]),
        .executable(name: "sortedvault", targets: ["sortedvault"]),
        .executable(name: "sortedvault-cli", targets: ["sortedvault-cli"]),
        .executable(name: "sortedvault-fleet-daemon", targets: ["sortedvault-fleet-daemon"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.3"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", exact: "4.5.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", exact: "2.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio", exact: "1.33.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", exact: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", exact: "2.4.1"),
        .package(url: "https://github.com/swift-server/async-http-client", exact: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", exact: "2.37.6"),
    ],
    targets: [
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]
        ),
        .target(name: "VaultCrypto", dependencies: ["CSodium"]),
        .target(name: "VaultCore", dependencies: ["VaultCrypto"]),
        // age v1 files (age-encryption.org/v1) for sealed backups: scrypt and X25519 recipients, armor;
        // every primitive from libsodium (HKDF over its HMAC-SHA-256), so the CLI links no swift-crypto
        // (which imports full Foundation, and with it ICU).
        // The access log's file and line format: the daemon writes every decision; the CLI and
        // `sortedvault recover` write what the owner did outside the daemon.
        .target(name: "AccessLogFile", dependencies: ["VaultCore", "VaultCrypto"]),
        .target(name: "VaultAge", dependencies: ["VaultCrypto", "CSodium"]),
        .target(name: "Vault", dependencies: ["VaultCore", "VaultCrypto", "BoundedJSON", .product(name: "NIOPosix", package: "swift-nio")]),
        .target(
            name: "VaultSQLite",
            // SQLite's C API (GRDB's module map of the system's libsqlite3), for every read and write;
            // GRDB itself, which links full Foundation, is for the tests only.
            dependencies: ["Vault", "VaultCore", .product(name: "GRDBSQLite", package: "GRDB.swift")]
        ),
        // Fleet mode's shared store: sealed rows in PostgreSQL (docs/fleet.md). The database sees only
        // ciphertext and names' keyed hashes: rows are sealed here, above it, with Vault's metadata encoding.
        .target(
            name: "VaultPostgres",
            dependencies: [
                "Vault", "VaultCore", "VaultCrypto",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        .target(name: "VaultTesting", dependencies: ["VaultCore", "VaultCrypto", "VaultSession", "BoundedJSON"]),
        .target(name: "BoundedJSON"),
        // One request and one reply type per method of both interfaces, converting to and from the
        // wire in one place; secrets go between the frame and SecureBytes without a String; and the
        // blocking client connection they travel on (`WireConnection`: plain socket calls, the check
        // of who serves the socket, frames in wiped buffers). No Foundation, no NIO: the daemon,
        // VaultClient and the lean CLI all use it. The types are generated at build time from
        // interfaces/*.varlink (plugin GenerateInterfaceCode); the wire runtime is written by hand.
        .target(name: "VaultAPI", dependencies: ["BoundedJSON", "VaultCrypto"], plugins: ["GenerateInterfaceCode"]),
        .target(
            name: "VaultSession",
            dependencies: [
                "VaultCore", "VaultCrypto", "BoundedJSON", .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        // OpenID Connect: discovery, JWKS and id-token verification (RS256, ES256), no I/O of its own.
        // swift-crypto is for signature checks only; secrets at rest stay with libsodium (VaultCrypto).
        .target(
            name: "VaultOIDC",
            dependencies: [
                "VaultCore", "VaultCrypto", "BoundedJSON",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        // The one HTTP client of the daemon: AsyncHTTPClient on the process's event loops, TLS from
        // swift-nio-ssl (BoringSSL, as postgres-nio's fleet TLS) and the system's trust roots.
        .target(
            name: "VaultOAuthHTTP",
            dependencies: [
                "VaultSession", "VaultOIDC", "VaultCore", "VaultCrypto",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The optional desktop keyring (freedesktop Secret Service) through libsecret, loaded by dlopen
        // (CSecretLoader) at the first keyring call: the daemon maps neither it nor GLib unless the
        // keyring is used.
        .target(name: "CSecretLoader"),
        .target(name: "VaultSecretService", dependencies: ["VaultCore", "VaultCrypto", "CSecretLoader", .product(name: "NIOPosix", package: "swift-nio")]),
        .target(
            name: "Varlink",
            dependencies: [
                "BoundedJSON",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The policy engine; its list of operations comes from the interface files' @operation tags.
        .target(name: "VaultPolicy", plugins: ["GenerateInterfaceCode"]),
        .target(name: "CLinuxShims"),
        .executableTarget(
            name: "varlink-certification-server",
            dependencies: ["Varlink", .product(name: "NIOConcurrencyHelpers", package: "swift-nio"), .product(name: "Logging", package: "swift-log")]
        ),
        // The varlink IDL parser and the Swift generator, as the build tool the GenerateInterfaceCode
        // plugin runs: it reads interfaces/*.varlink (a bad or unsupported file is a build error at its
        // line and column) and writes VaultAPI's generated types, which embed the files themselves for
        // the daemon to serve. VarlinkIDLTests import it as a module.
        .executableTarget(name: "VarlinkIDL"),
        .plugin(name: "GenerateInterfaceCode", capability: .buildTool(), dependencies: ["VarlinkIDL"]),
        .target(
            name: "VaultDaemon",
            dependencies: [
                "Varlink", "VaultAPI", "VaultPolicy", "VaultClient", "Vault", "VaultSQLite", "VaultCore", "VaultCrypto", "CLinuxShims",
                "VaultSession", "VaultOAuthHTTP", "VaultOIDC", "VaultAge", "AccessLogFile",
                "VaultSecretService",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                // The operators' metrics endpoint (`[metrics] listen`): Prometheus text over HTTP/1.
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            // The server protocol and dispatcher of each interface, with every method's policy check.
            plugins: ["GenerateInterfaceCode"]
        ),
        // The typed API in the vault's own terms, for both ends of the socket: the async client apps
        // use (`VaultClient`, `SessionClient`, the async face of VaultAPI's blocking `WireConnection`), the
        // one conversion between VaultAPI's wire types and VaultCore's and VaultSession's, the wire
        // errors made from `VaultError`, and the interface files as served. The daemon builds on it.
        .target(name: "VaultClient", dependencies: ["Varlink", "VaultAPI", "VaultCore", "VaultCrypto", "VaultSession", "CLICore", .product(name: "NIOPosix", package: "swift-nio")]),
        // The umbrella an app adopts in one line: finds the user's daemon and re-exports the login API
        // (VaultSession), the socket client (VaultClient), VaultCore and VaultCrypto; nothing of the wire.
        .target(name: "SortedVault", dependencies: ["VaultClient", "VaultSession", "VaultCore", "VaultCrypto", "CLICore", "VaultLoopback"]),
        // The browser sign-in's loopback receiver (127.0.0.1, a random path, bounded HTTP), shared by
        // `session login` and SortedVault's `signIn`: plain sockets and poll, no Foundation networking.
        .target(name: "VaultLoopback", dependencies: ["VaultCore", "VaultCrypto"]),
        // What the ArgumentParser programs (`sortedvault-cli`, `sortedvault-fleet-daemon`, the credential
        // helpers) share over the CLI core: their options, error reporting and the exec token file.
        .target(
            name: "CLIOptions",
            dependencies: [
                "VaultClient", "VaultCore", "VaultCrypto", "CLICore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The CLI core of all four programs: paths, secret input, starting the daemon, reading replies
        // into failure texts and exit codes, status lines. No Foundation, no SwiftNIO, no threads
        // (docs/speed.md, "Lean CLI"): keep it that way.
        .target(name: "CLICore", dependencies: ["VaultAPI", "BoundedJSON", "VaultCrypto", "CLinuxShims"]),
        // `sortedvault`, the lean front: retrieve, store, delete and session autologin by hand over
        // CLICore; everything else is handed (execv, argv unchanged) to `sortedvault-cli`.
        .executableTarget(name: "sortedvault", dependencies: ["CLICore", "VaultAPI", "VaultCrypto", "BoundedJSON", "CLinuxShims"],
                         linkerSettings: noExportedSymbols),
        // The full command tree (ArgumentParser), installed next to `sortedvault` as `sortedvault-cli`,
        // and the one-host daemon: `daemon`, `init` and `recover` are DaemonCommands', run in this
        // process. One program, because the two shared 15.6 of the CLI's 16.3 MB of code (the Swift
        // runtime, FoundationEssentials, ArgumentParser, the vault's modules): docs/install.md. Every
        // command but those three talks to the daemon only. Run through a link named
        // `git-credential-sortedvault` or `docker-credential-sortedvault`, it is that credential helper.
        // Linked as the daemon was (packedRelocations), for the daemon's resident memory.
        .executableTarget(
            name: "sortedvault-cli",
            dependencies: [
                "CLIOptions", "VaultClient", "CLICore", "VaultAPI", "VaultCore", "VaultCrypto", "VaultSession", "BoundedJSON", "SortedVault",
                "CredentialHelpers", "VaultLoopback", "VaultImport", "VaultAge", "AccessLogFile", "VaultSecretService",
                "DaemonCommands",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            linkerSettings: packedRelocations
        ),
        // The daemon's commands (`daemon`, `init`, `recover`), run by sortedvault-cli and by the fleet daemon.
        .target(
            name: "DaemonCommands",
            dependencies: [
                "CLIOptions", "VaultDaemon", "VaultClient", "Vault", "VaultSQLite", "VaultCore", "VaultCrypto",
                "VaultSecretService", "CLICore", "AccessLogFile",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // A fleet's store in PostgreSQL, for the fleet daemon only: postgres-nio imports full
        // Foundation (and with it ICU), which the one-host daemon must not carry (docs/install.md).
        .target(
            name: "VaultFleet",
            dependencies: [
                "VaultDaemon", "VaultPostgres", "Vault", "VaultCore", "VaultCrypto", "VaultPolicy",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        .executableTarget(
            name: "sortedvault-fleet-daemon", dependencies: ["DaemonCommands", "VaultFleet"], linkerSettings: packedRelocations),
        // docker's and git's credential-helper protocols over the daemon: parsing and naming, no I/O of
        // its own; sortedvault-cli runs each helper over it.
        .target(name: "CredentialHelpers", dependencies: ["VaultClient", "VaultCore", "VaultCrypto", "VaultSession", "BoundedJSON"]),
        // Moving in: finds the plaintext credentials git's store, docker, netrc, gh, twine and npm left in
        // their files, names them as the helpers look them up, and rewrites the files without them. No
        // I/O but the files it is pointed at; sortedvault-cli wires it to the vault.
        .target(name: "VaultImport", dependencies: ["CredentialHelpers", "VaultCore", "VaultCrypto", "BoundedJSON"]),
        .executableTarget(name: "sortedvault-bench"),
        .testTarget(name: "VaultCryptoTests", dependencies: ["VaultCrypto"]),
        .testTarget(name: "VaultAgeTests", dependencies: ["VaultAge", "VaultCrypto", "TestSupport"], resources: [.copy("Vectors")]),
        .testTarget(name: "VarlinkTests", dependencies: ["Varlink", "TestSupport", .product(name: "NIOConcurrencyHelpers", package: "swift-nio")]),
        .testTarget(name: "VarlinkIDLTests", dependencies: ["VarlinkIDL"]),
        .testTarget(
            name: "CLICoreTests",
            dependencies: ["CLICore", "VaultAPI", "VaultClient", "Varlink", "VaultCore", "VaultCrypto", "VaultSession", "BoundedJSON", "CLIOptions"]
        ),
        .testTarget(name: "VaultAPITests", dependencies: ["VaultAPI", "VaultCrypto", "BoundedJSON", "TestSupport"]),
        .testTarget(name: "VaultSessionTests", dependencies: ["VaultSession", "VaultCore", "VaultCrypto", "VaultTesting", "BoundedJSON", .product(name: "Logging", package: "swift-log"),
                                                              .product(name: "InMemoryLogging", package: "swift-log"),
                                                              .product(name: "MetricsTestKit", package: "swift-metrics")]),
        .testTarget(name: "VaultPolicyTests", dependencies: ["VaultPolicy", "TestSupport"]),
        .testTarget(name: "SortedVaultTests", dependencies: ["SortedVault", "VaultTesting", "TestSupport"]),
        .testTarget(name: "CredentialHelpersTests", dependencies: ["CredentialHelpers", "VaultCrypto"]),
        .testTarget(name: "VaultImportTests", dependencies: ["VaultImport", "CredentialHelpers", "VaultCore", "VaultCrypto", "VaultTesting", "TestSupport"]),
        .testTarget(
            name: "VaultOIDCTests",
            dependencies: [
                "VaultOIDC", "VaultOAuthHTTP", "VaultCore", "VaultCrypto", "VaultTesting", "BoundedJSON", "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .testTarget(name: "ProviderHTTPTests", dependencies: ["VaultOAuthHTTP", "VaultOIDC", "VaultSession", "VaultCrypto", "BoundedJSON", "TestSupport",
                                                      .product(name: "NIOCore", package: "swift-nio")]),
        .testTarget(
            name: "DaemonTests",
            dependencies: [
                "VaultClient", "VaultDaemon", "VaultAPI", "Varlink", "VaultCore", "VaultCrypto", "VaultTesting",
                "VaultSession", "VaultOAuthHTTP", "Vault", "VaultSQLite", "VaultPolicy", "TestSupport", "SortedVault", "AccessLogFile",
                "VarlinkIDL",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // Process and fixture helpers shared by the test targets that run real processes.
        .target(name: "TestSupport", dependencies: ["VaultClient", "VaultSession", "VaultCrypto", "BoundedJSON", "VaultTesting", "CLinuxShims",
                                                  .product(name: "AsyncHTTPClient", package: "async-http-client"),
                                                  .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio")],
                path: "Tests/TestSupport"),
        // libsecret's headers, linked, for the keyring tests only.
        .systemLibrary(name: "CSecret", path: "Tests/CSecret", pkgConfig: "libsecret-1", providers: [.apt(["libsecret-1-dev"])]),
        // Where the keyring tests' own GLib finds its session bus, set before main (no setenv later).
        .target(name: "CTestBus", dependencies: ["CSecret"], path: "Tests/CTestBus"),
        .testTarget(
            name: "SecretServiceTests",
            dependencies: ["VaultSecretService", "VaultClient", "VaultCore", "VaultCrypto", "VaultTesting", "CSecret", "CTestBus", "TestSupport", .product(name: "NIOPosix", package: "swift-nio")]
        ),
        .testTarget(
            name: "PostgresTests",
            dependencies: [
                "VaultPostgres", "VaultCore", "VaultCrypto", "VaultTesting", "TestSupport", "VaultClient", "VaultSession",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "VaultTests",
            dependencies: [
                "Vault", "VaultSQLite", "VaultCore", "VaultCrypto", "VaultTesting",
                .product(name: "GRDB", package: "GRDB.swift"), .product(name: "NIOPosix", package: "swift-nio"),
            ],
            resources: [.copy("Fixtures")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
