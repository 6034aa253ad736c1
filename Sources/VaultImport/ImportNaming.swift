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
                return try gitDestination(scheme: scheme, host: host, path: path, user: found.user)
            case .dockerRegistry(let serverURL, let identityToken):
                guard let account = identityToken ? "<token>" : found.user else { return nil }
                return VaultDestination(key: try ItemKey(service: DockerCredentialStore.servicePrefix + serverURL, account: account),
                                        label: DockerCredentialStore.label)
            case .pythonRepository(let url):
                guard let user = found.user else { return nil }
                return try pythonDestination(url: url, user: user)
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
    /// As git's helper stores what git says worked: `git:PROTOCOL://HOST[/PATH]`, the user.
    static func gitDestination(scheme: String, host: String, path: String?, user: String?) throws -> VaultDestination {
        let origin = "\(scheme)://\(host)"
        let service = GitCredentialStore.servicePrefix + origin + (path.map { "/\($0)" } ?? "")
        return VaultDestination(
            key: try ItemKey(service: VaultNameEncoding.stored(service), account: VaultNameEncoding.stored(user ?? "")),
            label: "git credentials for \(origin)")
    }

    /// As the Python keyring backend stores what a program asks for by service and user.
    static func pythonDestination(url: String, user: String) throws -> VaultDestination {
        VaultDestination(key: try ItemKey(service: VaultNameEncoding.stored(url), account: VaultNameEncoding.stored(user)),
                         label: "Python keyring: \(url)")
    }

    /// libsecret's `SECRET_SCHEMA_IDENTIFIER_GENERIC`: the schema of an item stored under none.
    static let genericSchema = "org.freedesktop.Secret.Generic"

    /// Where an item of the desktop keyring goes, by the attributes the tool that stored it set:
    /// - git-credential-libsecret (`xdg:schema` `org.git.Password`: protocol, server, port, path,
    ///   user) where git's helper, ours, asks;
    /// - Python keyring's Secret Service backend (`application` "Python keyring library": service,
    ///   username) where our Python keyring backend asks;
    /// - anything else with a `service` attribute (secret-tool's habit, ours): that service, and
    ///   `account`, `username` or `user` as the account (empty when none);
    /// - the rest: service `keyring:SCHEMA` (`keyring:item` without one, or with libsecret's generic
    ///   one, which gnome-keyring may report for an item stored under none), the item's label as
    ///   account.
    public static func destination(forKeyringItem label: String, attributes: [String: String]) throws -> VaultDestination {
        do {
            let schema = attributes["xdg:schema"].flatMap { $0 == genericSchema ? nil : $0 }
            if schema == "org.git.Password", let scheme = attributes["protocol"], let server = attributes["server"] {
                let host = server + (attributes["port"].map { ":\($0)" } ?? "")
                return try gitDestination(scheme: scheme, host: host, path: attributes["path"], user: attributes["user"])
            }
            if attributes["application"] == "Python keyring library", let service = attributes["service"], let user = attributes["username"] {
                return try pythonDestination(url: service, user: user)
            }
            if let service = attributes["service"], !service.isEmpty {
                let account = attributes["account"] ?? attributes["username"] ?? attributes["user"] ?? ""
                return VaultDestination(key: try ItemKey(service: service, account: account), label: label.isEmpty ? "from the keyring" : label)
            }
            return VaultDestination(key: try ItemKey(service: "keyring:" + (schema ?? "item"), account: label.isEmpty ? "(no label)" : label),
                                    label: label.isEmpty ? "from the keyring" : label)
        } catch let error as VaultError {
            throw ImportError(.malformed, "keyring item \(label.debugDescription): no vault name (\(error.reason))")
        }
    }

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
