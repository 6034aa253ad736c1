import Foundation
import TestSupport

/// A small Python client for what the Swift test process cannot do to itself: exec another
/// program with the connection open, delete its own executable, change its groups. Each mode
/// prints one line per call: the reply frame, or "closed".
enum PeerScript {
    static let text = #"""
        import os, socket, sys

        def call(s):
            s.sendall(b'{"method":"org.sortedvault.vault.Status"}\0')
            data = b''
            while not data.endswith(b'\0'):
                try:
                    chunk = s.recv(65536)
                except OSError:
                    chunk = b''
                if not chunk:
                    return 'closed'
                data += chunk
            return data[:-1].decode()

        def connect(path):
            s = socket.socket(socket.AF_UNIX)
            s.connect(path)
            return s

        mode, path = sys.argv[1], sys.argv[2]
        if mode == 'exec':          # call, then exec argv[3] keeping the connection
            s = connect(path)
            print(call(s), flush=True)
            os.set_inheritable(s.fileno(), True)
            os.execv(sys.argv[3], [sys.argv[3], sys.argv[0], 'after-exec', str(s.fileno())])
        elif mode == 'after-exec':  # path is the inherited descriptor
            print(call(socket.socket(fileno=int(path))), flush=True)
        elif mode == 'delete-self': # call, delete our own executable, call again, connect again
            s = connect(path)
            print(call(s), flush=True)
            os.unlink(os.readlink('/proc/self/exe'))
            print(call(s), flush=True)
            print(call(connect(path)), flush=True)
        elif mode == 'groups':      # only these supplementary groups (needs root), then call
            os.setgroups([int(g) for g in sys.argv[3:]])
            print(call(connect(path)), flush=True)
        """#

    /// Writes the script into `cli`'s directory and runs `interpreter script ARGS`; returns its lines.
    static func run(_ cli: CLIHarness, interpreter: String = "/usr/bin/python3", _ arguments: [String]) throws -> [String] {
        let script = cli.root + "/peer.py"
        if !FileManager.default.fileExists(atPath: script) {
            try text.write(toFile: script, atomically: true, encoding: .utf8)
        }
        let (status, output, errors) = try Subprocess.run([interpreter, script] + arguments, environment: cli.environment, input: Data())
        guard status == 0 else { throw HarnessError("peer.py \(arguments) exited with \(status): \(String(decoding: errors, as: UTF8.self))") }
        return String(decoding: output, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// A copy of the Python interpreter: another executable file, with its own inode.
    static func interpreterCopy(_ cli: CLIHarness, name: String) throws -> String {
        let copy = cli.root + "/" + name
        let interpreter = URL(fileURLWithPath: "/usr/bin/python3").resolvingSymlinksInPath().path
        try ReachableExecutable.copy(interpreter, to: copy)  // close-on-exec: no ETXTBSY when it runs
        return copy
    }
}
