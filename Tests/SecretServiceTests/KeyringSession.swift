import CSecret
import CTestBus
import Foundation
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A private desktop keyring for tests: its own D-Bus session bus (`dbus-daemon`, with no service
/// activation, so nothing starts behind our back) and a real `gnome-keyring-daemon` whose login
/// collection is created and unlocked non-interactively (`--unlock`, password on stdin), in a
/// private HOME and XDG_RUNTIME_DIR.
///
/// The bus and the keyring live in a small shell script whose stdin is a pipe from this process:
/// when the session is stopped, or the test process dies however it dies, the pipe closes and the
/// script kills both. Start-up waits (bounded) until `org.freedesktop.secrets` has an owner.
final class KeyringSession: @unchecked Sendable {
    static let password = "keyring test password"

    let root: String
    let busAddress: String
    /// The gnome-keyring-daemon process, 0 when the session has no keyring.
    let keyringPID: pid_t
    private let script: Subprocess
    private var control: Int32

    var home: String { root + "/home" }
    var runtimeDir: String { root + "/run" }

    /// - Parameters:
    ///   - keyring: false gives a session bus with no Secret Service provider on it.
    ///   - root: the private directory to run in (its `bus` is the bus's socket); a new one by default.
    init(keyring: Bool = true, root directory: String? = nil) throws {
        let root = directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("sv-kr-\(UUID().uuidString.prefix(8))").path
        self.root = root
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var input: [Int32] = [0, 0], output: [Int32] = [0, 0]
        guard pipe(&input) == 0, pipe(&output) == 0 else { throw HarnessError("pipe failed") }
        for fd in input + output { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
        defer { close(null) }
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = nil
        script = try Subprocess.spawn(["/bin/bash", "-c", Self.script, "keyring-session", root, Self.password, keyring ? "1" : "0"],
                                      environment: environment, stdin: input[0], stdout: output[1], stderr: null)
        close(input[0]); close(output[1])
        control = input[1]
        // The script prints one line: "ready PID ADDRESS", or "failed: why".
        var line = Data()
        var byte: UInt8 = 0
        var descriptor = pollfd(fd: output[0], events: Int16(POLLIN), revents: 0)
        let deadline = Date().addingTimeInterval(600)
        while Date() < deadline, poll(&descriptor, 1, 200) >= 0 {
            if descriptor.revents == 0 { continue }
            guard read(output[0], &byte, 1) == 1 else { break }
            if byte == UInt8(ascii: "\n") { break }
            line.append(byte)
        }
        close(output[0])
        let words = String(decoding: line, as: UTF8.self).split(separator: " ", maxSplits: 2).map(String.init)
        guard words.count == 3, words[0] == "ready", let pid = pid_t(words[1]) else {
            close(control)
            script.wait()
            throw HarnessError("the test keyring did not start: \(String(decoding: line, as: UTF8.self))")
        }
        keyringPID = pid
        busAddress = words[2]
    }

    deinit { stop() }

    /// Stops the keyring and the bus, and removes the private directories.
    func stop() {
        guard control >= 0 else { return }
        close(control)
        control = -1
        script.wait()
        try? FileManager.default.removeItem(atPath: root)
    }

    /// The environment for a process that should use this keyring.
    func environment(_ base: [String: String] = ProcessInfo.processInfo.environment) -> [String: String] {
        var environment = base
        environment["DBUS_SESSION_BUS_ADDRESS"] = busAddress
        return environment
    }

    /// Locks the login collection through the Secret Service API, as a screen locker would.
    func lockLoginCollection() throws {
        let (status, _, err) = try Subprocess.run(
            ["/usr/bin/dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.secrets", "/org/freedesktop/secrets",
             "org.freedesktop.Secret.Service.Lock", "array:objpath:/org/freedesktop/secrets/collection/login"],
            environment: environment(), input: Data())
        guard status == 0 else { throw HarnessError("locking the keyring failed: \(String(decoding: err, as: UTF8.self))") }
    }

    /// Runs `secret-tool ARGS` against this keyring.
    func secretTool(_ arguments: [String], input: Data = Data()) throws -> (status: Int32, stdout: Data, stderr: String) {
        let (status, out, err) = try Subprocess.run(["/usr/bin/secret-tool"] + arguments, environment: environment(), input: input)
        return (status, out, String(decoding: err, as: UTF8.self))
    }

    private static let script = #"""
    set -u
    root="$1"; password="$2"; with_keyring="$3"
    export HOME="$root/home" XDG_RUNTIME_DIR="$root/run"
    mkdir -p "$HOME" "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
    cat > "$root/bus.conf" <<EOF
    <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
     "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
    <busconfig>
      <type>session</type>
      <listen>unix:path=$root/bus</listen>
      <auth>EXTERNAL</auth>
      <policy context="default">
        <allow send_destination="*" eavesdrop="true"/>
        <allow eavesdrop="true"/>
        <allow own="*"/>
      </policy>
    </busconfig>
    EOF
    dbus-daemon --config-file="$root/bus.conf" --nofork --nopidfile --print-address=1 >"$root/bus.address" 2>"$root/bus.log" &
    bus=$!
    keyring=0
    trap '[ "$keyring" != 0 ] && kill -CONT "$keyring" 2>/dev/null; [ "$keyring" != 0 ] && kill "$keyring" 2>/dev/null; kill "$bus" 2>/dev/null; wait; rm -rf "$root"' EXIT
    for i in $(seq 1 500); do [ -s "$root/bus.address" ] && break; sleep 0.01; done
    [ -s "$root/bus.address" ] || { echo "failed: dbus-daemon did not start: $(cat "$root/bus.log")"; exit 1; }
    export DBUS_SESSION_BUS_ADDRESS="$(head -n1 "$root/bus.address")"
    if [ "$with_keyring" = 1 ]; then
      printf '%s' "$password" | gnome-keyring-daemon --unlock --components=secrets --foreground >"$root/keyring.log" 2>&1 &
      keyring=$!
      owned=0
      for i in $(seq 1 1000); do
        if dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
             org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q 'boolean true'; then
          owned=1; break
        fi
        sleep 0.01
      done
      [ "$owned" = 1 ] || { echo "failed: org.freedesktop.secrets has no owner after 10 s: $(cat "$root/keyring.log")"; exit 1; }
    fi
    echo "ready $keyring $DBUS_SESSION_BUS_ADDRESS"
    read -r _ || true
    """#
}

/// The one keyring this test process's own libsecret calls use. GLib connects to the session bus
/// once per process and keeps that connection; with no address in the environment, it looks for
/// `bus` in its user runtime directory, which it read once, before main (`CTestBus`). The shared
/// keyring's bus listens exactly there. So nothing here changes the environment — another thread's
/// `posix_spawn` may be reading it — and the processes this test process starts do not inherit the
/// test keyring; those that need it are given its address (``KeyringSession/environment(_:)``).
/// The suites that use it run one test at a time (``SecretServiceSuite``).
enum SharedKeyring {
    static let session: KeyringSession = {
        do {
            guard let directory = sortedvault_test_bus_directory() else {
                throw HarnessError("no private directory for the test bus was made before main (CTestBus)")
            }
            return try KeyringSession(root: String(cString: directory))
        } catch {
            preconditionFailure("\(error)")
        }
    }()

    /// Unlocks the login collection without a prompt, through gnome-keyring's own
    /// `UnlockWithMasterPassword` (the Secret Service's `Unlock` would want a graphical prompt).
    static func unlockLoginCollection() throws {
        var error: UnsafeMutablePointer<GError>?
        guard let service = secret_service_get_sync(SECRET_SERVICE_OPEN_SESSION, nil, &error) else {
            throw HarnessError("no Secret Service: \(error.map { String(cString: $0.pointee.message) } ?? "?")")
        }
        defer { g_object_unref(service) }
        let proxy = UnsafeMutableRawPointer(service).assumingMemoryBound(to: GDBusProxy.self)
        let value = secret_value_new(KeyringSession.password, -1, "text/plain")
        defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
        var parts: [OpaquePointer?] = [g_variant_new_object_path("/org/freedesktop/secrets/collection/login"),
                                       secret_service_encode_dbus_secret(service, value)]
        let reply = g_dbus_connection_call_sync(
            g_dbus_proxy_get_connection(proxy), "org.freedesktop.secrets", "/org/freedesktop/secrets",
            "org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface", "UnlockWithMasterPassword",
            g_variant_new_tuple(&parts, 2), nil, G_DBUS_CALL_FLAGS_NONE, -1, nil, &error)
        if let reply { g_variant_unref(reply) }
        if let error {
            defer { g_error_free(error) }
            throw HarnessError("unlocking the keyring failed: \(String(cString: error.pointee.message))")
        }
    }
}

