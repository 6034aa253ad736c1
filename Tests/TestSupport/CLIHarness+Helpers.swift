import Foundation

extension CLIHarness {
    /// A built executable next to `sortedvault` (the credential helpers), with a clear error when it
    /// is not built.
    public static func sibling(_ name: String) throws -> String {
        let path = ((executable as NSString).deletingLastPathComponent as NSString).appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw HarnessError("\(name) is not built at \(path): run `swift build` first")
        }
        return path
    }

    /// Runs `argv` (any program) in this world's environment plus `extra`, with `input` on stdin.
    public func runProgram(_ argv: [String], input: Data = Data(), extra: [String: String] = [:]) throws -> Result {
        let (status, out, err) = try Subprocess.run(argv, environment: environment.merging(extra) { _, new in new }, input: input)
        return Result(status: status, stdout: out, stderr: String(decoding: err, as: UTF8.self))
    }
}
