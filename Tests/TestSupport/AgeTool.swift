import Foundation
import VaultCrypto

#if canImport(Glibc)
import Glibc
#endif

/// Debian's `age` and `age-keygen` (1.1.1), the reference implementation the interop tests check
/// VaultAge against, run in a private temporary directory.
///
/// age reads passphrases from the terminal only. ``runAtTerminal(_:typing:prompts:)`` runs it under
/// a pseudo-terminal made by python3's `pty` module; the passphrase reaches python on its standard
/// input and age through the terminal, never on a command line or in an environment.
public final class AgeTool {
    public static let age = "/usr/bin/age"
    public static let keygen = "/usr/bin/age-keygen"
    public static let python = "/usr/bin/python3"

    public static let available = [age, keygen, python].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    public static let missing = "Debian's age (/usr/bin/age, /usr/bin/age-keygen) and python3: apt-get install -y age python3"

    public let directory: String
    private let environment = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]

    public init() throws {
        var template = Array((FileManager.default.temporaryDirectory.path + "/vault-age-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw HarnessError("cannot create a temporary directory") }
        directory = String(cString: made)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    public func path(_ name: String) -> String { directory + "/" + name }

    public func write(_ bytes: some Collection<UInt8>, to name: String) throws {
        let descriptor = open(path(name), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw HarnessError("cannot create \(name)") }
        defer { close(descriptor) }
        let array = Array(bytes)
        guard array.withUnsafeBytes({ Glibc.write(descriptor, $0.baseAddress, $0.count) }) == array.count else {
            throw HarnessError("cannot write \(name)")
        }
    }

    public func read(_ name: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path(name)))) }

    /// Runs a program with pipes; returns its status and standard output, throwing with its error
    /// output when it fails and `check` is set.
    @discardableResult
    public func run(_ argv: [String], check: Bool = true) throws -> (status: Int32, output: String) {
        let (status, out, err) = try Subprocess.run(argv, environment: environment, input: Data(), timeout: .seconds(300))
        if check, status != 0 {
            throw HarnessError("\(argv.joined(separator: " ")) exited \(status): \(String(decoding: err, as: UTF8.self))")
        }
        return (status, String(decoding: out, as: UTF8.self))
    }

    /// Runs `argv` in a pseudo-terminal and types `passphrase` at each of its first `prompts`
    /// passphrase prompts. Returns the exit status and the terminal's text, the passphrase cut out.
    public func runAtTerminal(_ argv: [String], typing passphrase: SecureBytes, prompts: Int) throws -> (status: Int32, screen: String) {
        var input = passphrase.withUnsafeBytes { Data($0) } + Data([0x0A])
        defer { _ = input.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        let (status, _, screen) = try Subprocess.run([Self.python, "-c", Self.terminalDriver, String(prompts)] + argv,
                                                     environment: environment, input: input, timeout: .seconds(300))
        return (status, String(decoding: screen, as: UTF8.self))
    }

    /// The pseudo-terminal driver: reads the passphrase from stdin, starts the program on a new
    /// pty, types the passphrase after each prompt (after a pause, so age has turned echo off),
    /// and exits with the program's status, writing the screen (passphrase removed) to stderr.
    static let terminalDriver = #"""
    import os, pty, select, sys, time
    secret = sys.stdin.buffer.readline()[:-1]
    prompts, argv = int(sys.argv[1]), sys.argv[2:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(argv[0], argv)
    screen, typed, deadline = b"", 0, time.monotonic() + 240
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if not ready:
            continue
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        screen += data
        while typed < prompts and screen.lower().count(b"passphrase") > typed:
            time.sleep(0.3)
            os.write(fd, secret + b"\r")
            typed += 1
    else:
        os.kill(pid, 9)
    _, status = os.waitpid(pid, 0)
    if secret:
        screen = screen.replace(secret, b"<passphrase>")
    sys.stderr.buffer.write(screen)
    sys.exit(os.waitstatus_to_exitcode(status))
    """#
}
