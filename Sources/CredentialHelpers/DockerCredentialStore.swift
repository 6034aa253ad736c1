import BoundedJSON
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// docker's credential-helper protocol (github.com/docker/docker-credential-helpers) over any
/// `TokenStore`, normally the daemon's `VaultClient`.
///
/// Each registry's login is one item: service `docker:SERVERURL` (the server URL exactly as docker
/// sends it, e.g. `docker:https://index.docker.io/v1/`), account = the user name, secret = the
/// password or identity token. Storing a new user for a server replaces the old one, as docker expects
/// one login per server.
///
/// ```swift
/// let helper = DockerCredentialStore(store: vaultClient)
/// let answer = try await helper.get(standardInput)   // {"ServerURL":…,"Username":…,"Secret":…}\n
/// ```
///
/// Failures are `DockerCredentialError`s whose message the executable prints on standard output with
/// exit status 1, as the reference helpers do; no message ever holds the secret.
public struct DockerCredentialStore: Sendable {
    /// The message docker's client library matches (`credentials.IsErrCredentialsNotFoundMessage`).
    public static let notFoundMessage = "credentials not found in native keychain"
    public static let servicePrefix = "docker:"
    /// docker's own label for the items it stores in keyrings.
    public static let label = "Docker Credentials"
    /// The largest `store` input read; the daemon's own secret limit is below this.
    public static let maximumInputBytes = 1 << 20

    let store: any TokenStore

    public init(store: any TokenStore) { self.store = store }

    /// `store`: JSON `{"ServerURL","Username","Secret"}` (names matched case-insensitively, as Go does).
    public func store(_ input: SecureBytes) async throws {
        let fields = try Self.credentialFields(input)
        guard let serverURL = fields.serverURL, !serverURL.isEmpty else { throw DockerCredentialError("no credentials server URL") }
        guard let username = fields.username, !username.isEmpty else { throw DockerCredentialError("no credentials username") }
        let key = try Self.key(serverURL: serverURL, username: username)
        try await store.store(fields.secret ?? SecureBytes(copying: []), for: key, options: StoreOptions(label: Self.label))
        for old in try await items(for: serverURL) where old.account != username {
            try await store.delete(old.key)
        }
    }

    /// `get`: the server URL on standard input; the answer is one JSON line, byte for byte what Go writes.
    public func get(_ input: SecureBytes) async throws -> SecureBytes {
        let serverURL = try Self.serverURL(input)
        guard let item = try await items(for: serverURL).max(by: { $0.modifiedAt < $1.modifiedAt }) else {
            throw DockerCredentialError(Self.notFoundMessage)
        }
        let secret: SecureBytes
        do {
            secret = try await store.retrieve(item.key).secret
        } catch let error as VaultError where error.code == .notFound {
            throw DockerCredentialError(Self.notFoundMessage)
        }
        // Reserved up front so the buffer never moves (a move would leave a copy of the secret behind).
        var output: [UInt8] = []
        output.reserveCapacity(64 + 6 * (serverURL.utf8.count + item.account.utf8.count + secret.count))
        defer { wipe(&output) }
        output += Array(#"{"ServerURL":"#.utf8)
        GoJSONString.append(serverURL, to: &output)
        output += Array(#","Username":"#.utf8)
        GoJSONString.append(item.account, to: &output)
        output += Array(#","Secret":"#.utf8)
        secret.withUnsafeBytes { GoJSONString.append($0, to: &output) }
        output += Array("}\n".utf8)
        return SecureBytes(copying: output)
    }

    /// `erase`: the server URL on standard input.
    public func erase(_ input: SecureBytes) async throws {
        let serverURL = try Self.serverURL(input)
        let items = try await items(for: serverURL)
        guard !items.isEmpty else { throw DockerCredentialError(Self.notFoundMessage) }
        for item in items { try await store.delete(item.key) }
    }

    /// `list`: `{"SERVERURL":"USERNAME",…}` with keys in byte order, as Go encodes a map.
    public func list() async throws -> [UInt8] {
        var logins: [String: ItemMetadata] = [:]
        for item in try await store.list(service: nil) where item.service.hasPrefix(Self.servicePrefix) {
            let url = String(item.service.dropFirst(Self.servicePrefix.count))
            if let known = logins[url], known.modifiedAt > item.modifiedAt { continue }
            logins[url] = item
        }
        var output: [UInt8] = [UInt8(ascii: "{")]
        for (index, url) in logins.keys.sorted(by: { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }).enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            GoJSONString.append(url, to: &output)
            output.append(UInt8(ascii: ":"))
            GoJSONString.append(logins[url]!.account, to: &output)
        }
        return output + Array("}\n".utf8)
    }

    private func items(for serverURL: String) async throws -> [ItemMetadata] {
        let service = Self.servicePrefix + serverURL
        return try await store.list(service: service).filter { $0.service == service }
    }

    static func key(serverURL: String, username: String) throws -> ItemKey {
        do {
            return try ItemKey(service: servicePrefix + serverURL, account: username)
        } catch let error as VaultError {
            throw DockerCredentialError("cannot store this login: \(error.reason)")
        }
    }
}

/// A failure the helper reports on standard output (exit 1), as docker's helpers do.
public struct DockerCredentialError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
