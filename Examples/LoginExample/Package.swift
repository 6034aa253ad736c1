// swift-tools-version: 6.1
import PackageDescription

// An app that keeps its user signed in through the sortedvault daemon: what docs/swift.md shows,
// built and run by the repository's tests (DaemonTests' LoginExampleTests).
let package = Package(
    name: "LoginExample",
    platforms: [.macOS(.v13)],
    dependencies: [
        // An app outside this repository names the git URL instead: the product is the same.
        .package(name: "sortedvault", path: "../.."),
    ],
    targets: [
        .executableTarget(name: "login-example", dependencies: [.product(name: "SortedVault", package: "sortedvault")]),
    ],
    swiftLanguageModes: [.v6]
)
