import Testing
@testable import VaultImport

/// Where each tool's file is, from a home and an environment the test gives.
@Suite(.timeLimit(.minutes(20))) struct ScanLocationsTests {
    @Test func withNoVariablesEveryToolsDefaultIsListed() {
        let paths = ScanLocations(home: "/home/ada/", environment: [:]).all().map(\.path)
        #expect(paths == ["/home/ada/.git-credentials", "/home/ada/.config/git/credentials", "/home/ada/.docker/config.json",
                          "/home/ada/.netrc", "/home/ada/.config/gh/hosts.yml", "/home/ada/.pypirc", "/home/ada/.npmrc"])
    }

    @Test func everyOverrideIsHonouredAndEmptyOrRelativeOnesAreNot() {
        let locations = ScanLocations(home: "/home/ada", environment: [
            "XDG_CONFIG_HOME": "/x", "DOCKER_CONFIG": "/d/", "NETRC": "/n/netrc", "GH_CONFIG_DIR": "/g", "NPM_CONFIG_USERCONFIG": "~/npm/rc",
        ])
        #expect(locations.all().map(\.path) == ["/home/ada/.git-credentials", "/x/git/credentials", "/d/config.json", "/n/netrc",
                                                "/g/hosts.yml", "/home/ada/.pypirc", "/home/ada/npm/rc"])
        #expect(locations.dockerConfig().reason == "DOCKER_CONFIG")
        let ignored = ScanLocations(home: "/h", environment: ["XDG_CONFIG_HOME": "relative", "DOCKER_CONFIG": "", "npm_config_userconfig": "/lower"])
        #expect(ignored.gh().path == "/h/.config/gh/hosts.yml")
        #expect(ignored.dockerConfig().path == "/h/.docker/config.json")
        #expect(ignored.npmrc().path == "/lower")
    }

    @Test func storeHelpersWithAFileAddTheirFilesOnce() {
        let lines = ["cache --timeout 300", "store --file ~/.my-credentials", "!f() { echo; }; f",
                     "/usr/lib/git-core/git-credential-store --file='/srv/with space'", "store --file=/home/ada/.git-credentials"]
        #expect(GitHelperLines.storeFiles(lines, home: "/home/ada") == ["/home/ada/.my-credentials", "/srv/with space", "/home/ada/.git-credentials"])
        #expect(GitHelperLines.storeFiles(["store --file /a", "", "store --file /b"], home: "/h") == ["/b"], "an empty helper resets the list")
        let paths = ScanLocations(home: "/home/ada", environment: [:]).all(gitHelperLines: lines).filter { $0.source == .gitCredentials }.map(\.path)
        #expect(paths == ["/home/ada/.git-credentials", "/home/ada/.config/git/credentials", "/home/ada/.my-credentials", "/srv/with space"])
    }

    @Test func gitConfigIsAskedOfTheFileGitConfigNames() {
        #expect(GitHelperLines.configArguments(environment: ["GIT_CONFIG": "/etc/alt"]) == ["git", "config", "--file", "/etc/alt", "--get-all", "credential.helper"])
        #expect(GitHelperLines.configArguments(environment: [:]) == ["git", "config", "--get-all", "credential.helper"])
    }
}
