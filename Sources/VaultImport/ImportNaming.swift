import CredentialHelpers
import VaultCore
import VaultCrypto

/// Where a found credential goes in the vault: the item key and label.
public struct VaultDestination: Sendable, Equatable, CustomStringConvertible {
    public let key: ItemKey
    public let label: String

    public var description: String { "\(key) (\(label))" }
}

/// The one place that says under which names an imported credential is stored, so that the helper
/// which will ask for it finds it at once. The names come from the helpers themselves
/// (``GitCredentialStore``, ``DockerCredentialStore``, ``VaultNameEncoding``), so they cannot drift.
///
/// ```swift
/// let destination = try ImportNaming.destination(for: found)   // "git:https://github.com"/"ada"
/// ```
///
/// - git remotes (git-credentials, netrc machines, gh hosts): as git's helper stores what git says
///   worked: service `git:PROTOCOL://HOST[/PATH]`, account the user (git's empty user name when the
///   file gives none), both through ``VaultNameEncoding``; netrc and gh are `https`.
/// - docker registries: as docker's helper stores them: service `docker:SERVERURL` with the server
///   URL exactly as docker keys it in `auths`, account the user, or `<token>` for an identity token
///   (docker's own convention in its native store).
/// - Python repositories: as the keyring backend stores what twine asks for: service the upload URL
///   twine uses (`https://upload.pypi.org/legacy/`), account the user, through the same encoding.
/// - npm registries (no helper protocol exists): service `npm:NERFDART` (`npm://registry.npmjs.org/`),
///   account the field (`_authToken`, `_auth`, `_password`), the secret as npm writes it, so
///   `npm_config_//registry.npmjs.org/:_authToken` can be set from it unchanged.
///
/// nil for credentials no helper asks for by name (netrc `default`, pypirc `server-login`, a Python
/// repository without a user).
public enum ImportNaming {
    public static let npmServicePrefix = "npm:"

    public static func destination(for found: FoundCredential) throws -> VaultDestination? {
        do {
            switch found.origin {
            case .git(let scheme, let host, let path):
                let origin = "\(scheme)://\(host)"
                let service = GitCredentialStore.servicePrefix + origin + (path.map { "/\($0)" } ?? "")
                return VaultDestination(
                    key: try ItemKey(service: VaultNameEncoding.stored(service), account: VaultNameEncoding.stored(found.user ?? "")),
                    label: "git credentials for \(origin)")
            case .dockerRegistry(let serverURL, let identityToken):
                guard let account = identityToken ? "<token>" : found.user else { return nil }
                return VaultDestination(key: try ItemKey(service: DockerCredentialStore.servicePrefix + serverURL, account: account),
                                        label: DockerCredentialStore.label)
            case .pythonRepository(let url):
                guard let user = found.user else { return nil }
                return VaultDestination(
                    key: try ItemKey(service: VaultNameEncoding.stored(url), account: VaultNameEncoding.stored(user)),
                    label: "Python keyring: \(url)")
            case .npmRegistry(let uri, let field):
                return VaultDestination(key: try ItemKey(service: VaultNameEncoding.stored(npmServicePrefix + uri), account: field),
                                        label: "npm credentials for \(uri)")
            case .unnamed:
                return nil
            }
        } catch let error as VaultError {
            throw ImportError(.malformed, "\(found.path): no vault name for \(found.origin): \(error.reason)")
        }
    }
}

extension ImportNaming {
    /// The folder docker-credential-pass keeps docker logins in: `docker-credential-helpers/`
    /// + URL-safe base64 of the server URL + `/` + the user name.
    public static let dockerPassFolder = "docker-credential-helpers/"
    public static let passServicePrefix = "pass:"

    /// Where an entry of a `pass` store goes: a docker-credential-pass login under the name docker's
    /// helper asks for; any other entry `NAME/…/LEAF` as service `pass:NAME/…`, account `LEAF`
    /// (service `pass:` for an entry at the top of the store), so `sortedvault retrieve pass:email
    /// ada` finds `pass show email/ada`.
    public static func destination(forPassEntry entry: String) throws -> VaultDestination {
        do {
            if entry.hasPrefix(dockerPassFolder) {
                let parts = entry.dropFirst(dockerPassFolder.count).split(separator: "/", maxSplits: 1)
                if parts.count == 2, let serverURL = decodeURLBase64(parts[0]) {
                    return VaultDestination(key: try ItemKey(service: DockerCredentialStore.servicePrefix + serverURL, account: String(parts[1])),
                                            label: DockerCredentialStore.label)
                }
            }
            let folder = entry.lastIndex(of: "/").map { String(entry[..<$0]) } ?? ""
            let leaf = entry.lastIndex(of: "/").map { String(entry[entry.index(after: $0)...]) } ?? entry
            return VaultDestination(key: try ItemKey(service: passServicePrefix + folder, account: leaf), label: "pass: \(entry)")
        } catch let error as VaultError {
            throw ImportError(.malformed, "pass entry \(entry.debugDescription): no vault name (\(error.reason))")
        }
    }

    /// Go's `base64.URLEncoding` (padded), as docker-credential-pass names its folders; nil when the
    /// text is not that or not UTF-8.
    static func decodeURLBase64(_ text: Substring) -> String? {
        var standard = String(text.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        while standard.utf8.count % 4 != 0 { standard += "=" }
        guard let bytes = SecureBytes(base64Encoded: standard) else { return nil }
        return bytes.withUnsafeBytes { String(validating: $0, as: UTF8.self) }
    }
}
