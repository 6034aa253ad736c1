import Foundation

extension CLIHarness {
    /// A built executable next to `sortedvault`, with a clear error when it is not built. The credential
    /// helpers are `sortedvault-cli` under their own names, as installed: links to it, made once per test
    /// process in a private directory (the build directory is left as the build made it).
    public static func sibling(_ name: String) throws -> String {
        let directory = (executable as NSString).deletingLastPathComponent
        if helperNames.contains(name) {
            let links = try helperLinks.get()
            return (links as NSString).appendingPathComponent(name)
        }
        let path = (directory as NSString).appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw HarnessError("\(name) is not built at \(path): run `swift build` first")
        }
        return path
    }

    static let helperNames: Set<String> = ["git-credential-sortedvault", "docker-credential-sortedvault"]

    /// The directory of the helpers' links to the built `sortedvault-cli`.
    private static let helperLinks: Swift.Result<String, any Error> = Swift.Result {
        let cli = try sibling("sortedvault-cli")
        let links = FileManager.default.temporaryDirectory.appendingPathComponent("sortedvault-helpers-\(getpid())").path
        try? FileManager.default.removeItem(atPath: links)
        try FileManager.default.createDirectory(atPath: links, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        for name in helperNames {
            try FileManager.default.createSymbolicLink(atPath: (links as NSString).appendingPathComponent(name), withDestinationPath: cli)
        }
        return links
    }

    /// Runs `argv` (any program) in this world's environment plus `extra`, with `input` on stdin.
    public func runProgram(_ argv: [String], input: Data = Data(), extra: [String: String] = [:]) throws -> Result {
        let (status, out, err) = try Subprocess.run(argv, environment: environment.merging(extra) { _, new in new }, input: input)
        return Result(status: status, stdout: out, stderr: String(decoding: err, as: UTF8.self))
    }
}
