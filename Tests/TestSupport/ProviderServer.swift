import AsyncHTTPClient
import BoundedJSON
import Foundation
import NIOCore
import NIOHTTP1

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Glibc)
import Glibc
#endif

/// A real identity provider for the tests, run from `Tests/Support` with the repo's venv Python on
/// 127.0.0.1 and an ephemeral port, in its own state directory; stopped (SIGTERM) when the test is done.
///
/// ```swift
/// let provider = try ProviderServer(.supabase)
/// let answer = try await provider.signIn(email: "ada@example.com", password: "correct horse battery")
/// try await provider.revokeAll()
/// ```
/// Every kind has the same test controls (`/test/stats`, `/test/delay`, `/test/fail`, `/test/revoke-all`,
/// `/test/disable-user`, …), so one test matrix drives all three. `stop()` then `start()` is "the
/// provider is down, then back": the same port and the same state, every token still valid.
/// Do not share one instance between tests that change its controls.
open class ProviderServer: @unchecked Sendable {
    public enum Kind: Sendable {
        /// django-oauth-toolkit (`oauth-provider/provider.py`): RFC 6749, client `sorted-app`.
        case oauth2
        /// The GoTrue stand-in (`gotrue-standin/gotrue.py`): Supabase Auth behind its gateway.
        case supabase
        /// The Firebase Auth stand-in (`firebase-standin/firebase.py`): identitytoolkit + securetoken.
        case firebase

        var script: String {
            switch self {
            case .oauth2: "oauth-provider/provider.py"
            case .supabase: "gotrue-standin/gotrue.py"
            case .firebase: "firebase-standin/firebase.py"
            }
        }
    }

    public static let python = CLIHarness.repository + "/.venv/bin/python3"
    public static let supportDirectory = CLIHarness.repository + "/Tests/Support"
    /// The user every kind starts with (oauth2 signs in by the name `ada`).
    public static let email = "ada@example.com"
    public static let password = "correct horse battery"

    public let kind: Kind
    public let stateDirectory: String
    public private(set) var port = 0
    private let extraArguments: [String]
    private var process: Subprocess?

    /// Starts the provider; `arguments` go to its script (e.g. `["--access-token-seconds", "60"]`).
    public init(_ kind: Kind, arguments: [String] = []) throws {
        self.kind = kind
        extraArguments = arguments
        stateDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("sv-provider-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
        guard FileManager.default.isExecutableFile(atPath: Self.python) else {
            throw HarnessError("no Python venv at \(Self.python): run scripts/install-deps")
        }
        try start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: stateDirectory)
    }

    /// Starts the provider (again, on the same port after the first start) and waits until it listens.
    public func start() throws {
        let portFile = stateDirectory + "/port"
        try? FileManager.default.removeItem(atPath: portFile)
        let log = open(stateDirectory + "/provider.log", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { close(log); close(null) }
        let argv = [Self.python, Self.supportDirectory + "/" + kind.script, "--state-dir", stateDirectory,
                    "--port", "\(port)", "--quiet"] + extraArguments
        let child = try Subprocess.spawn(argv, environment: ProcessInfo.processInfo.environment, stdin: null, stdout: log, stderr: log)
        process = child
        let deadline = Date().addingTimeInterval(600)
        var status: Int32 = 0
        while Date() < deadline {
            if let number = Int(stateFile("port") ?? "") {
                port = number
                return
            }
            if child.hasExited(status: &status) {
                process = nil
                throw HarnessError("the \(kind) provider exited with \(status): \(logText())")
            }
            usleep(20_000)
        }
        throw HarnessError("the \(kind) provider did not start in 30 s: \(logText())")
    }

    /// Stops the provider: "the provider is down".
    public func stop() {
        guard let process else { return }
        process.signal(SIGTERM)
        process.wait()
        self.process = nil
    }

    public func logText() -> String { (try? String(contentsOfFile: stateDirectory + "/provider.log", encoding: .utf8)) ?? "" }

    /// A file the provider wrote into its state directory (`port`, `anon-key`, `api-key`, …), trimmed.
    public func stateFile(_ name: String) -> String? {
        (try? String(contentsOfFile: stateDirectory + "/" + name, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `http://127.0.0.1:PORT`: a Supabase project URL, or the Auth emulator's host for Firebase.
    public var base: String { "http://127.0.0.1:\(port)" }
    public var baseURL: URL { URL(string: base)! }

    // MARK: HTTP as a test

    /// One request to the provider: the status and the exact answer bytes.
    ///
    /// Through AsyncHTTPClient, not URLSession: a hang guard cancels the calls it abandons, and on
    /// Linux cancelling a URLSession task while it completes can deadlock the test process (seen in
    /// `FleetDatabaseLossTests`: `URLSessionTask.cancel` waiting on the session's queue while the
    /// completion waited on the task's status lock).
    public func send(_ method: String, _ path: String, body: [UInt8]? = nil, headers: [String: String] = [:]) async throws -> (Int, [UInt8]) {
        var request = HTTPClientRequest(url: base + path)
        request.method = HTTPMethod(rawValue: method)
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        for (name, value) in headers { request.headers.replaceOrAdd(name: name, value: value) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(600))
        let answer = try await response.body.collect(upTo: 64 << 20)
        return (Int(response.status.code), Array(answer.readableBytesView))
    }

    /// A JSON POST.
    public func post(_ path: String, json: [String: JSONValue], headers: [String: String] = [:]) async throws -> (Int, [UInt8]) {
        try await send("POST", path, body: JSONValue.object(json).serialized(),
                       headers: headers.merging(["Content-Type": "application/json"]) { old, _ in old })
    }

    /// A form POST (`application/x-www-form-urlencoded`).
    public func post(_ path: String, form: [String: String], headers: [String: String] = [:]) async throws -> (Int, [UInt8]) {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._*")
        let body = form.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed)!)" }.joined(separator: "&")
        return try await send("POST", path, body: Array(body.utf8),
                              headers: headers.merging(["Content-Type": "application/x-www-form-urlencoded"]) { old, _ in old })
    }
}
