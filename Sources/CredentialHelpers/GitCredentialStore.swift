import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto
import VaultSession

/// git's credential-helper actions over the vault.
///
/// Plain credentials are items: service `git:PROTOCOL://HOST` (plus `/PATH` when git sends a path,
/// i.e. with `credential.useHttpPath`), account = the user name, secret = the password; names the vault
/// refuses, such as git's empty user name, go through ``VaultNameEncoding``. A host bound
/// to a persistent login (`sortedvault git bind`, see ``GitLoginBinding``) answers `get` with an access
/// token valid now: the daemon's AutoLogin refreshes it when needed, so git never sees an expired one.
///
/// ```swift
/// let git = GitCredentialStore(store: vault, autoLogin: sessions.autoLogin)
/// let answer = try await git.get(try GitCredentialMessage.parse(input))   // username=…\npassword=…\n
/// ```
public struct GitCredentialStore: Sendable {
    public static let servicePrefix = "git:"

    let store: any TokenStore
    let autoLogin: @Sendable (ItemKey) async throws -> AutoLoginResult

    public init(store: any TokenStore, autoLogin: @escaping @Sendable (ItemKey) async throws -> AutoLoginResult) {
        self.store = store
        self.autoLogin = autoLogin
    }

    /// The answer to `get`, or nil when the vault has nothing for this request (git then asks the
    /// next helper or the user). `notes` collects what the user should hear on standard error.
    public func get(_ request: GitCredentialMessage, notes: inout [String]) async throws -> SecureBytes? {
        guard let origin = try Self.origin(request) else { return nil }
        if let binding = try await GitLoginBinding.find(origin: origin, in: store) {
            // A binding made before http was refused, or a request git downgraded: no token in clear.
            try GitLoginBinding.checkTransport(origin)
            return try await token(for: binding, notes: &notes)
        }
        let service = try Self.service(request)
        let candidates = try await store.list(service: service).filter {
            $0.service.utf8.elementsEqual(service.utf8) && Self.matches($0.account, request.username)
        }
        guard let item = candidates.max(by: { $0.modifiedAt < $1.modifiedAt }) else { return nil }
        let secret: SecureBytes
        do {
            secret = try await store.retrieve(item.key).secret
        } catch let error as VaultError where error.code == .notFound {
            return nil
        }
        return try Self.answer(username: VaultNameEncoding.original(item.account), password: secret)
    }

    /// `store`: keeps what git says worked. Incomplete requests are ignored, as git asks. A bound host
    /// is left alone: its token comes from the login, not from git.
    public func store(_ request: GitCredentialMessage) async throws {
        guard let origin = try Self.origin(request), let username = request.username,
              let password = request.password else { return }
        if try await GitLoginBinding.find(origin: origin, in: store) != nil { return }
        let key = try ItemKey(service: try Self.service(request), account: VaultNameEncoding.stored(username))
        try await store.store(password, for: key, options: StoreOptions(label: "git credentials for \(origin)"))
    }

    /// `erase`: git says the credential was rejected. Plain items are deleted; a binding is kept (the
    /// next `get` asks the login again).
    public func erase(_ request: GitCredentialMessage) async throws {
        guard try Self.origin(request) != nil else { return }
        let service = try Self.service(request)
        for item in try await store.list(service: service)
        where item.service.utf8.elementsEqual(service.utf8) && Self.matches(item.account, request.username) {
            try await store.delete(item.key)
        }
    }

    private func token(for binding: GitLoginBinding, notes: inout [String]) async throws -> SecureBytes? {
        let result = try await autoLogin(binding.login)
        switch result {
        case .valid(let grant), .refreshed(let grant), .offline(let grant?, _):
            return try Self.answer(username: binding.username, password: grant.accessToken)
        case .offline(nil, let reason):
            notes.append("the login \(binding.login) cannot be refreshed now (\(reason)) and its token has expired; try again when the provider is reachable")
            return nil
        case .reauthRequired(let reason):
            notes.append("sign in again for \(binding.login): \(reason.explanation)")
            return nil
        }
    }

    /// `PROTOCOL://HOST`, or nil when git did not say both.
    static func origin(_ request: GitCredentialMessage) throws -> String? {
        guard let scheme = request.protocolName, !scheme.isEmpty, let host = request.host, !host.isEmpty else { return nil }
        return "\(scheme)://\(host)"
    }

    static func service(_ request: GitCredentialMessage) throws -> String {
        guard let origin = try origin(request) else { throw GitCredentialError("git did not send protocol and host") }
        guard let path = request.path, !path.isEmpty else { return VaultNameEncoding.stored(servicePrefix + origin) }
        return VaultNameEncoding.stored(servicePrefix + origin + "/" + path)
    }

    /// Whether a stored account answers git's `username` (any account when git sent none), by bytes.
    static func matches(_ account: String, _ username: String?) -> Bool {
        guard let username else { return true }
        return account.utf8.elementsEqual(VaultNameEncoding.stored(username).utf8)
    }

    /// `username=…\npassword=…\n`, refusing any value that could inject another line.
    static func answer(username: String, password: SecureBytes) throws -> SecureBytes {
        _ = try GitCredentialMessage.checkedText(Array(username.utf8)[...], field: "the stored username")
        let unsafe = password.withUnsafeBytes { $0.contains(0x0A) || $0.contains(0x0D) || $0.contains(0) }
        if unsafe { throw GitCredentialError("the stored password contains a newline, carriage return or NUL, which git's protocol cannot carry; refusing to answer") }
        let head = Array("username=\(username)\npassword=".utf8)
        return SecureBytes(count: head.count + password.count + 1, initializingWith: { out in
            out.copyBytes(from: head)
            password.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[head.count...]).copyMemory(from: $0) }
            out[out.count - 1] = 0x0A
        })
    }
}
