import Foundation
import TestSupport
import Varlink
import VaultCrypto
import VaultSession

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Glibc)
import Glibc
#endif

/// A real provider of one kind, started by the test on 127.0.0.1 and stopped with it: the oauth2
/// provider (django-oauth-toolkit) or a stand-in (`Tests/Support/{gotrue,firebase}-standin`). All
/// share the `/test/…` controls, so one test matrix drives every kind.
protocol ProviderPeer: AnyObject, Sendable {
    var kind: ProviderKind { get }
    /// Signs ada in as the app would; the JSON the app pipes into `session save`.
    func signIn() async throws -> [String: JSONValue]
    /// What the app saves with its login.
    func settings() throws -> ProviderSettings
    /// The token the app sends to its API (Firebase: the ID token).
    func appToken(_ answer: [String: JSONValue]) -> String?
    func refreshToken(_ answer: [String: JSONValue]) -> String?
    /// Asks the provider directly whether `refreshToken` still refreshes.
    func refreshTokenWorks(_ refreshToken: String) async throws -> Bool
    /// "The provider is down" / "back" (same port, same state).
    func stop()
    func start() throws
    var controls: PeerControls { get }
    /// Makes ada's login unusable at the provider as an administrator would (disable the user).
    func disableUser() async throws
}

extension ProviderPeer {
    func refreshRequests() async throws -> Int {
        Int(try await controls.stats()["token_requests"]?.objectValue?["refresh_token"]?.intValue ?? -1)
    }

    func revokeAll() async throws { try await controls.control("/test/revoke-all") }
    func disableUser() async throws { try await controls.control("/test/disable-user", ["email": "ada@example.com"]) }
}

/// A Python test server: `python SCRIPT --state-dir DIR --port N --quiet EXTRA…`, which writes
/// DIR/port once it listens. Restarted on the same port with the same state.
final class PeerProcess: @unchecked Sendable {
    let stateDirectory: String
    let script: String
    let extraArguments: [String]
    private(set) var port = 0
    private var child: Subprocess?

    init(script: String, extraArguments: [String] = []) throws {
        self.script = CLIHarness.repository + "/" + script
        self.extraArguments = extraArguments
        stateDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("sv-peer-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
        guard FileManager.default.isExecutableFile(atPath: OAuthTestProvider.python) else {
            throw HarnessError("no Python venv at \(OAuthTestProvider.python): run scripts/install-deps")
        }
        try start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: stateDirectory)
    }

    func start() throws {
        let portFile = stateDirectory + "/port"
        try? FileManager.default.removeItem(atPath: portFile)
        let log = open(stateDirectory + "/peer.log", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { close(log); close(null) }
        let process = try Subprocess.spawn(
            [OAuthTestProvider.python, script, "--state-dir", stateDirectory, "--port", "\(port)", "--quiet"] + extraArguments,
            environment: ProcessInfo.processInfo.environment, stdin: null, stdout: log, stderr: log)
        child = process
        let deadline = Date().addingTimeInterval(30)
        var status: Int32 = 0
        while Date() < deadline {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8), let number = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                port = number
                return
            }
            if process.hasExited(status: &status) {
                child = nil
                throw HarnessError("\(script) exited with \(status): \(logText())")
            }
            usleep(20_000)
        }
        throw HarnessError("\(script) did not start in 30 s: \(logText())")
    }

    func stop() {
        guard let child else { return }
        child.signal(SIGTERM)
        child.wait()
        self.child = nil
    }

    func logText() -> String { (try? String(contentsOfFile: stateDirectory + "/peer.log", encoding: .utf8)) ?? "" }
    func file(_ name: String) throws -> String {
        try String(contentsOfFile: stateDirectory + "/" + name, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    var controls: PeerControls { PeerControls(base: "http://127.0.0.1:\(port)") }
}

/// The `/test/…` controls and plain requests to a test server.
struct PeerControls: Sendable {
    let base: String

    func stats() async throws -> [String: JSONValue] {
        let (data, _) = try await URLSession.shared.data(from: URL(string: base + "/test/stats")!)
        guard case .object(let object) = try JSONValue.parse(Array(data)) else { throw HarnessError("bad stats") }
        return object
    }

    func control(_ path: String, _ body: [String: JSONValue] = [:]) async throws {
        let (status, _) = try await post(path, json: .object(body))
        guard status == 200 else { throw HarnessError("\(path) failed with HTTP \(status)") }
    }

    /// A POST with a JSON or form body and extra headers: the status and the body's JSON object.
    func post(_ path: String, json: JSONValue? = nil, form: String? = nil,
              headers: [String: String] = [:]) async throws -> (Int, [String: JSONValue]) {
        var request = URLRequest(url: URL(string: base + path)!)
        request.httpMethod = "POST"
        if let json {
            request.httpBody = Data(json.serialized())
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        } else if let form {
            request.httpBody = Data(form.utf8)
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, (try? JSONValue.parse(Array(data)))?.objectValue ?? [:])
    }
}

/// The oauth2 kind: django-oauth-toolkit through ``OAuthTestProvider``.
final class OAuth2Peer: ProviderPeer, @unchecked Sendable {
    let kind = ProviderKind.oauth2
    let provider: OAuthTestProvider

    init() throws {
        provider = try OAuthTestProvider()
    }

    func signIn() async throws -> [String: JSONValue] {
        guard case .object(let object) = try JSONValue.parse(try await provider.signIn()) else { throw HarnessError("bad token response") }
        return object
    }

    func settings() throws -> ProviderSettings { ProviderSettings(try provider.provider()) }
    func appToken(_ answer: [String: JSONValue]) -> String? { answer["access_token"]?.stringValue }
    func refreshToken(_ answer: [String: JSONValue]) -> String? { answer["refresh_token"]?.stringValue }
    func refreshTokenWorks(_ refreshToken: String) async throws -> Bool { try await provider.tryRefresh(refreshToken).0 == 200 }
    func stop() { provider.stop() }
    func start() throws { try provider.start() }
    var controls: PeerControls { PeerControls(base: provider.base) }
    /// provider.py has no users to disable: revoking every token is what an administrator can do there.
    func disableUser() async throws { try await provider.control("/test/revoke-all") }
}

/// The supabase kind: the GoTrue stand-in, whose anon key is in its state directory.
final class SupabasePeer: ProviderPeer, @unchecked Sendable {
    let kind = ProviderKind.supabase
    let process: PeerProcess

    init() throws {
        process = try PeerProcess(script: "Tests/Support/gotrue-standin/gotrue.py")
    }

    var anonKey: String { (try? process.file("anon-key")) ?? "" }

    func signIn() async throws -> [String: JSONValue] {
        let (status, answer) = try await controls.post(
            "/auth/v1/token?grant_type=password",
            json: ["email": "ada@example.com", "password": "correct horse battery"], headers: ["apikey": anonKey])
        guard status == 200 else { throw HarnessError("GoTrue sign-in failed with HTTP \(status)") }
        return answer
    }

    func settings() throws -> ProviderSettings {
        ProviderSettings(kind: .supabase, url: URL(string: controls.base)!, apiKey: SecureBytes(copying: Array(anonKey.utf8)))
    }

    func appToken(_ answer: [String: JSONValue]) -> String? { answer["access_token"]?.stringValue }
    func refreshToken(_ answer: [String: JSONValue]) -> String? { answer["refresh_token"]?.stringValue }
    func refreshTokenWorks(_ refreshToken: String) async throws -> Bool {
        try await controls.post("/auth/v1/token?grant_type=refresh_token", json: ["refresh_token": .string(refreshToken)],
                                headers: ["apikey": anonKey]).0 == 200
    }
    func stop() { process.stop() }
    func start() throws { try process.start() }
    var controls: PeerControls { process.controls }
}

/// The firebase kind: the Firebase Auth stand-in on the emulator's URL scheme, rotating refresh tokens.
final class FirebasePeer: ProviderPeer, @unchecked Sendable {
    let kind = ProviderKind.firebase
    let process: PeerProcess

    init() throws {
        process = try PeerProcess(script: "Tests/Support/firebase-standin/firebase.py", extraArguments: ["--rotate-refresh-tokens"])
    }

    var apiKey: String { (try? process.file("api-key")) ?? "" }

    func signIn() async throws -> [String: JSONValue] {
        let (status, answer) = try await controls.post(
            "/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=\(apiKey)",
            json: ["email": "ada@example.com", "password": "correct horse battery", "returnSecureToken": true])
        guard status == 200 else { throw HarnessError("Firebase sign-in failed with HTTP \(status)") }
        return answer
    }

    func settings() throws -> ProviderSettings {
        ProviderSettings(kind: .firebase, url: URL(string: controls.base + "/securetoken.googleapis.com")!,
                         apiKey: SecureBytes(copying: Array(apiKey.utf8)))
    }

    func appToken(_ answer: [String: JSONValue]) -> String? { answer["idToken"]?.stringValue }
    func refreshToken(_ answer: [String: JSONValue]) -> String? { answer["refreshToken"]?.stringValue }
    func refreshTokenWorks(_ refreshToken: String) async throws -> Bool {
        try await controls.post("/securetoken.googleapis.com/v1/token?key=\(apiKey)",
                                form: "grant_type=refresh_token&refresh_token=\(refreshToken)").0 == 200
    }
    func stop() { process.stop() }
    func start() throws { try process.start() }
    var controls: PeerControls { process.controls }
}
