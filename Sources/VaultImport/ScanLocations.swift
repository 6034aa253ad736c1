/// A file to look at, and why it is looked at (which variable or default chose it).
public struct ScanLocation: Sendable, Equatable, CustomStringConvertible {
    public let source: ImportSource
    public let path: String
    /// `NETRC`, `default`, `credential.helper`…: for the user to see where a path came from.
    public let reason: String

    public var description: String { "\(source): \(path) (\(reason))" }

    public init(source: ImportSource, path: String, reason: String) {
        self.source = source
        self.path = path
        self.reason = reason
    }
}

/// Where each tool keeps its credentials for this user, from a home directory and an environment
/// the caller passes in (the logic never reads the process's own).
///
/// ```swift
/// let locations = ScanLocations(home: "/home/ada", environment: ["DOCKER_CONFIG": "/srv/docker"])
/// locations.all()   // ~/.git-credentials, …, /srv/docker/config.json, ~/.netrc, …
/// ```
///
/// Empty variables count as unset; `XDG_CONFIG_HOME` must be absolute (the XDG rule). git's
/// configured `store --file` helpers come from ``GitHelperLines/storeFiles(_:home:)``, fed with
/// what ``GitHelperLines/configArguments(environment:)`` prints.
public struct ScanLocations: Sendable {
    public let home: String
    public let environment: [String: String]

    public init(home: String, environment: [String: String]) {
        self.home = home.count > 1 && home.hasSuffix("/") ? String(home.dropLast()) : home
        self.environment = environment
    }

    /// Every location, with `helperLines` (`git config --get-all credential.helper`) adding git's
    /// configured store files; the same path is listed once.
    public func all(gitHelperLines: [String] = []) -> [ScanLocation] {
        var seen: Set<String> = []
        let candidates = gitCredentials(helperLines: gitHelperLines) + [dockerConfig(), netrc(), gh(), pypirc(), npmrc()]
        return candidates.filter { seen.insert($0.path).inserted }
    }

    func variable(_ name: String) -> String? {
        guard let value = environment[name], !value.isEmpty else { return nil }
        return value
    }

    var configHome: (path: String, reason: String) {
        if let xdg = variable("XDG_CONFIG_HOME"), xdg.hasPrefix("/") { return (xdg, "XDG_CONFIG_HOME") }
        return (home + "/.config", "default")
    }

    /// git's store helper reads `~/.git-credentials` and `$XDG_CONFIG_HOME/git/credentials`
    /// (`~/.config/git/credentials`), and `--file` paths of configured helpers.
    public func gitCredentials(helperLines: [String] = []) -> [ScanLocation] {
        var locations = [ScanLocation(source: .gitCredentials, path: home + "/.git-credentials", reason: "default")]
        let config = configHome
        locations.append(ScanLocation(source: .gitCredentials, path: config.path + "/git/credentials", reason: config.reason))
        for file in GitHelperLines.storeFiles(helperLines, home: home) {
            locations.append(ScanLocation(source: .gitCredentials, path: file, reason: "credential.helper"))
        }
        return locations
    }

    public func dockerConfig() -> ScanLocation {
        if let directory = variable("DOCKER_CONFIG") {
            return ScanLocation(source: .dockerConfig, path: joined(directory, "config.json"), reason: "DOCKER_CONFIG")
        }
        return ScanLocation(source: .dockerConfig, path: home + "/.docker/config.json", reason: "default")
    }

    public func netrc() -> ScanLocation {
        if let file = variable("NETRC") { return ScanLocation(source: .netrc, path: file, reason: "NETRC") }
        return ScanLocation(source: .netrc, path: home + "/.netrc", reason: "default")
    }

    public func gh() -> ScanLocation {
        if let directory = variable("GH_CONFIG_DIR") {
            return ScanLocation(source: .gh, path: joined(directory, "hosts.yml"), reason: "GH_CONFIG_DIR")
        }
        let config = configHome
        return ScanLocation(source: .gh, path: config.path + "/gh/hosts.yml", reason: config.reason)
    }

    public func pypirc() -> ScanLocation {
        ScanLocation(source: .pypirc, path: home + "/.pypirc", reason: "default")
    }

    /// npm reads its settings from the environment case-insensitively; the upper-case name wins.
    public func npmrc() -> ScanLocation {
        for name in ["NPM_CONFIG_USERCONFIG", "npm_config_userconfig"] {
            if let file = variable(name) { return ScanLocation(source: .npmrc, path: expanded(file), reason: name) }
        }
        return ScanLocation(source: .npmrc, path: home + "/.npmrc", reason: "default")
    }

    func joined(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    func expanded(_ path: String) -> String {
        path == "~" ? home : path.hasPrefix("~/") ? home + path.dropFirst() : path
    }
}
