import CredentialHelpers
import VaultCore

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
