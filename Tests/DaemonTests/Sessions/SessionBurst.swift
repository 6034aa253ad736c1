import Foundation
import TestSupport
import Varlink
import VaultCore

#if canImport(Glibc)
import Glibc
#endif

/// Many concurrent AutoLogin calls from several processes (`Tests/Support/session-burst.py`), all
/// sent at the same moment once every process has its connections open.
enum SessionBurst {
    struct Results {
        var outcomes: [String] = []
        var tokens: Set<String> = []
        var errors: [String] = []
    }

    static func run(socket: String, key: ItemKey, root: String, calls: [Int]) throws -> Results {
        let goFile = root + "/go-\(UUID().uuidString.prefix(6))"
        let script = CLIHarness.repository + "/Tests/Support/session-burst.py"
        var bursts: [(Subprocess, String)] = []
        for (index, count) in calls.enumerated() {
            let output = root + "/burst-\(index)-\(UUID().uuidString.prefix(6)).out"
            let out = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
            defer { close(out); close(null) }
            bursts.append((try Subprocess.spawn(
                [OAuthTestProvider.python, script, socket, key.service, key.account, "\(count)", goFile],
                environment: ProcessInfo.processInfo.environment, stdin: null, stdout: out, stderr: out), output))
        }
        let deadline = Date().addingTimeInterval(30)
        while bursts.contains(where: { !((try? String(contentsOfFile: $0.1, encoding: .utf8)) ?? "").hasPrefix("READY") }) {
            guard Date() < deadline else { throw HarnessError("the burst processes did not get ready") }
            usleep(10_000)
        }
        _ = FileManager.default.createFile(atPath: goFile, contents: Data())
        var results = Results()
        for (child, output) in bursts {
            let status = child.wait()
            let text = try String(contentsOfFile: output, encoding: .utf8)
            guard status == 0, let json = text.split(separator: "\n").last,
                  case .array(let list) = try JSONValue.parse(Array(json.utf8)) else {
                throw HarnessError("a burst process failed (\(status)): \(text)")
            }
            for case .object(let result) in list {
                if let error = result["error"]?.stringValue { results.errors.append(error) }
                if let outcome = result["outcome"]?.stringValue { results.outcomes.append(outcome) }
                if let token = result["token"]?.stringValue { results.tokens.insert(token) }
            }
        }
        return results
    }
}
