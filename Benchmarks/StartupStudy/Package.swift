// swift-tools-version: 6.1
import PackageDescription

// Throw-away executables for the CLI start-up study (docs/speed.md, scripts/startup-study): each adds
// one dependency of the `sortedvault` CLI to a program that does next to nothing, to price it.
let package = Package(
    name: "startup",
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.3"),
    ],
    targets: [
        .executableTarget(name: "hello"),
        .executableTarget(name: "hello-foundation"),
        .executableTarget(name: "hello-foundation-full"),
        .executableTarget(name: "hello-argparser", dependencies: [.product(name: "ArgumentParser", package: "swift-argument-parser")]),
        .executableTarget(name: "hello-argparser-bypass", dependencies: [.product(name: "ArgumentParser", package: "swift-argument-parser")]),
        .executableTarget(name: "hello-nio", dependencies: [
            .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
        ]),
        .executableTarget(name: "hello-nio-loop", dependencies: [
            .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
        ]),
        .executableTarget(name: "varlink-min"),
    ]
)
