import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A command run in a real terminal: a detached tmux session on a socket of its own, its screen
/// read with `capture-pane`, keys typed with `send-keys`. For prompts that read the terminal
/// (no-echo passwords, a pasted address), which a pipe cannot drive.
///
/// ```swift
/// let terminal = try TmuxTerminal([cli, "session", "login", …], environment: env, directory: root)
/// _ = try terminal.waitForScreen { $0.contains("Password for") }
/// try terminal.type("secret")
/// #expect(try terminal.exitStatus() == 0)
/// ```
public final class TmuxTerminal {
    private let tmux: [String]
    private let exitFile: String

    /// Runs `argv` (with shell `redirections` such as `3<FILE`) in `directory`, in a 200×50 terminal.
    public init(_ argv: [String], redirections: String = "", environment: [String: String], directory: String) throws {
        func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let id = UUID().uuidString.prefix(8)
        exitFile = directory + "/tmux-exit-\(id)"
        let script = directory + "/tmux-\(id).sh"
        let exports = environment.map { "export \($0.key)=\(quoted($0.value))" }.sorted().joined(separator: "\n")
        try "\(exports)\ncd \(quoted(directory))\n\(argv.map(quoted).joined(separator: " ")) \(redirections)\necho \"EXIT=$?\" > \(quoted(exitFile))\nsleep 60\n"
            .write(toFile: script, atomically: true, encoding: .utf8)
        tmux = ["/usr/bin/tmux", "-S", directory + "/tmux-\(id).sock"]
        try run(["new-session", "-d", "-x", "200", "-y", "50", "/bin/sh " + script])
    }

    deinit { _ = try? run(["kill-server"]) }

    @discardableResult
    private func run(_ arguments: [String]) throws -> Data {
        let (status, out, err) = try Subprocess.run(tmux + arguments, environment: ProcessInfo.processInfo.environment, input: Data())
        guard status == 0 else { throw HarnessError("tmux \(arguments.first ?? "") failed: \(String(decoding: err, as: UTF8.self))") }
        return out
    }

    /// The screen's text, wrapped lines joined.
    public func screen() throws -> String {
        String(decoding: try run(["capture-pane", "-p", "-J"]), as: UTF8.self)
    }

    /// The screen once `condition` holds (a 600 s hang guard, never waited for when it works).
    public func waitForScreen(_ condition: (String) -> Bool) throws -> String {
        let guardUntil = Date().addingTimeInterval(600)
        while true {
            let text = try screen()
            if condition(text) { return text }
            guard Date() < guardUntil else { throw HarnessError("the terminal never showed what was waited for:\n\(text)") }
            usleep(100_000)
        }
    }

    /// Types `text` literally, then Enter.
    public func type(_ text: String) throws {
        try run(["send-keys", "-l", text])
        try run(["send-keys", "Enter"])
    }

    /// The command's exit status, once it ended (a 600 s hang guard).
    public func exitStatus() throws -> Int32 {
        let guardUntil = Date().addingTimeInterval(600)
        while !FileManager.default.fileExists(atPath: exitFile) {
            guard Date() < guardUntil else { throw HarnessError("the command in the terminal did not end:\n\(try screen())") }
            usleep(100_000)
        }
        let text = (try? String(contentsOfFile: exitFile, encoding: .utf8)) ?? ""
        guard let status = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines).dropFirst("EXIT=".count)) else {
            throw HarnessError("no exit status in \(text.debugDescription)")
        }
        return status
    }
}
