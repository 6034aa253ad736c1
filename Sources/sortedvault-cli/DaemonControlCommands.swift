import ArgumentParser
import FoundationEssentials
import CLIOptions
import VaultClient
import VaultCore

#if canImport(Glibc)
import Glibc
#endif

/// `sortedvault stop`: ends the daemon that serves the socket (SIGTERM to the pid its Status gives,
/// over a socket checked to be served by this user), and waits until it has let the socket go.
/// Under systemd, `systemctl --user stop sortedvault.socket sortedvault.service` instead: the socket
/// unit would start it again at the next call.
struct Stop: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop",
        abstract: "Stop the daemon (it locks the vault and closes the database cleanly).",
        discussion: "Under systemd use `systemctl --user stop sortedvault.socket sortedvault.service`: the socket unit starts it again at the next call.")

    @OptionGroup var global: GlobalOptions

    func perform() async throws {
        let paths = try global.paths()
        guard SocketProbe.answers(at: paths.socket) else {
            print("no daemon answers at \(paths.socket); nothing to stop")
            return
        }
        let pid = try await DaemonControl.pid(VaultClient(socketPath: paths.socket, timeout: .seconds(10)))
        try DaemonControl.signal(pid, SIGTERM)
        // Its graceful shutdown is bounded at 10 s; then it has let the socket go.
        for _ in 0..<1500 where SocketProbe.answers(at: paths.socket) { usleep(10_000) }
        guard !SocketProbe.answers(at: paths.socket) else {
            throw VaultError(.daemonFailed, "the daemon (pid \(pid)) still answers 15 s after SIGTERM; see its log")
        }
        print("stopped the daemon (pid \(pid))")
    }
}

/// `sortedvault reload`: the daemon reads its policy directory again (SIGHUP), keeping every
/// connection; a policy that does not load leaves the one in force, and this says why (exit 7).
struct Reload: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "reload",
        abstract: "Reload the access policy without restarting the daemon (as SIGHUP does).",
        discussion: "settings.toml is read only when the daemon starts: `sortedvault stop` and start it again for those.")

    @OptionGroup var global: GlobalOptions

    func perform() async throws {
        let paths = try global.paths()
        guard SocketProbe.answers(at: paths.socket) else {
            throw VaultError(.unavailable, "no daemon answers at \(paths.socket): it reads the policy when it starts")
        }
        let client = VaultClient(socketPath: paths.socket, timeout: .seconds(10))
        let before = try await client.status()
        guard let pid = before.pid, let reloads = before.policyReloads else {
            throw VaultError(.daemonFailed, "this daemon does not report its reloads (an older version): restart it")
        }
        try DaemonControl.signal(pid, SIGHUP)
        for _ in 0..<1000 {
            let now = try await client.status()
            if let done = now.policyReloads, done > reloads {
                if let error = now.policyError {
                    throw VaultError(.daemonFailed, "the policy was not reloaded, the one in force stays: \(error)")
                }
                print("reloaded the policy: " + (now.policyFiles ?? []).joined(separator: ", "))
                return
            }
            usleep(10_000)
        }
        throw VaultError(.daemonFailed, "the daemon (pid \(pid)) did not reload within 10 s; see its log")
    }
}

enum DaemonControl {
    static func signal(_ pid: Int, _ signal: Int32) throws {
        guard kill(pid_t(pid), signal) == 0 else {
            throw VaultError(.daemonFailed, "cannot signal the daemon (pid \(pid)): \(String(cString: strerror(errno)))")
        }
    }

    static func pid(_ client: VaultClient) async throws -> Int {
        guard let pid = try await client.status().pid else {
            throw VaultError(.daemonFailed, "this daemon does not report its pid (an older version): stop it by hand")
        }
        return pid
    }
}
