/// A tool that leaves credentials in a plaintext file, and whose file `sortedvault` can move in.
///
/// ```swift
/// ImportSource(rawValue: "netrc")   // .netrc
/// ImportSource.dockerConfig.rawValue // "docker-config"
/// ```
public enum ImportSource: String, Sendable, CaseIterable, CustomStringConvertible {
    /// git's `store` helper file: one URL with user and password a line.
    case gitCredentials = "git-credentials"
    /// docker's `config.json`: `auths` entries with base64 `user:password` or an identity token.
    case dockerConfig = "docker-config"
    /// curl's, git's and ftp's `.netrc`.
    case netrc
    /// The GitHub CLI's `hosts.yml` (tokens kept there with `--insecure-storage` or by old versions).
    case gh
    /// twine's and distutils' `.pypirc`.
    case pypirc
    /// npm's user `.npmrc`.
    case npmrc

    public var description: String { rawValue }
}
