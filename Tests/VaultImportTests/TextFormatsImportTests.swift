import Testing
import VaultCore
import VaultCrypto
@testable import VaultImport

/// netrc, gh's hosts.yml, .pypirc and .npmrc, as their tools document and write them.
@Suite(.timeLimit(.minutes(20))) struct TextFormatsImportTests {
    let fixture: ImportFixture
    init() throws { fixture = try ImportFixture() }

    @Test func netrcMachinesAcrossLinesAreFoundAndOnlyTheirPasswordsRemoved() throws {
        let path = try fixture.write(".netrc", """
            # work
            machine git.example.com login ada password s3cret-one
            machine api.example.com
              login bob
              password "quoted \\"two\\""
            macdef init
            machine not.a.machine password not-a-secret

            default login anonymous password s3cret-three
            """)
        let (original, found) = try fixture.scan(path, as: .netrc)
        #expect(found.map(\.origin) == [.git(protocol: "https", host: "git.example.com", path: nil),
                                        .git(protocol: "https", host: "api.example.com", path: nil), .unnamed("netrc default entry")])
        #expect(found.map(\.user) == ["ada", "bob", "anonymous"])
        #expect(found.map { text($0.secret) } == ["s3cret-one", "quoted \"two\"", "s3cret-three"])
        #expect(try ImportNaming.destination(for: found[0])?.key == ItemKey(service: "git:https://git.example.com", account: "ada"))
        #expect(try ImportNaming.destination(for: found[2]) == nil)
        let after = try fixture.rewritten(original, found, secrets: ["s3cret", "quoted"])
        #expect(after == """
            # work
            machine git.example.com login ada
            machine api.example.com
              login bob
            macdef init
            machine not.a.machine password not-a-secret

            default login anonymous
            """)
    }

    @Test func netrcWithAWordItDoesNotKnowIsRefusedAtItsLine() throws {
        let path = try fixture.write(".netrc", "machine a login b\n  port 22\n")
        let error = #expect(throws: ImportError.self) { try fixture.scan(path, as: .netrc) }
        #expect(error?.code == .malformed)
        #expect(error?.reason.contains("line 2") == true)
    }

    /// gh 2.40 and later with `--insecure-storage`, after its multi-account migration (yaml.v3,
    /// four-space indentation), beside a host logged in through the keyring (no token in the file).
    @Test func ghTokensOfEveryAccountAreFoundAndTheirLinesDropped() throws {
        let path = try fixture.write("gh/hosts.yml", """
            github.com:
                users:
                    monalisa:
                        oauth_token: gho_active0000000000000000000000000000
                    hubot:
                        oauth_token: gho_other00000000000000000000000000000
                git_protocol: ssh
                oauth_token: gho_active0000000000000000000000000000
                user: monalisa
            ghe.example.com:
                users:
                    ada:
                git_protocol: https
                user: ada

            """)
        let (original, found) = try fixture.scan(path, as: .gh)
        #expect(found.map(\.user) == ["hubot", "monalisa"])
        #expect(found.allSatisfy { $0.origin == .git(protocol: "https", host: "github.com", path: nil) })
        #expect(found.map { $0.removal.count } == [1, 2])
        #expect(try found.map { try ImportNaming.destination(for: $0)?.key } == [
            ItemKey(service: "git:https://github.com", account: "hubot"), ItemKey(service: "git:https://github.com", account: "monalisa")])
        let after = try fixture.rewritten(original, found, secrets: ["gho_"])
        #expect(after == """
            github.com:
                users:
                    monalisa:
                    hubot:
                git_protocol: ssh
                user: monalisa
            ghe.example.com:
                users:
                    ada:
                git_protocol: https
                user: ada

            """)
    }

    @Test func ghsOlderLayoutHasOneTokenPerHost() throws {
        let path = try fixture.write("gh/hosts.yml", "github.com:\n    oauth_token: 'gho_it''s'\n    user: octocat\n    git_protocol: https\n")
        let (original, found) = try fixture.scan(path, as: .gh)
        #expect(found.count == 1)
        #expect(text(found[0].secret) == "gho_it's")
        #expect(found[0].user == "octocat")
        #expect(try fixture.rewritten(original, found, secrets: ["gho_it"]) == "github.com:\n    user: octocat\n    git_protocol: https\n")
    }

    /// The layout packaging.python.org's "The .pypirc file" documents.
    @Test func pypircPasswordsAreNamedAsTwineAsksKeyring() throws {
        let path = try fixture.write(".pypirc", """
            [distutils]
            index-servers =
                pypi
                testpypi
                private

            [pypi]
            username = __token__
            password = pypi-AgEIcHlwaS5vcmcCJGUx

            [testpypi]
            password: pypi-testtoken0000

            [private]
            repository = HTTPS://Packages.Example.com/legacy/
            username = ada
            Password = multi
              line secret
            """)
        let (original, found) = try fixture.scan(path, as: .pypirc)
        #expect(found.map(\.origin) == [.pythonRepository(url: PypircFile.defaultRepository),
                                        .pythonRepository(url: PypircFile.testRepository),
                                        .pythonRepository(url: "https://Packages.Example.com/legacy/")])
        #expect(found.map(\.user) == ["__token__", "__token__", "ada"])
        #expect(text(found[2].secret) == "multi\nline secret")
        let names = try found.map { try #require(try ImportNaming.destination(for: $0)).key }
        #expect(names[0] == (try ItemKey(service: "https://upload.pypi.org/legacy/", account: "__token__")))
        let after = try fixture.rewritten(original, found, secrets: ["pypi-", "multi", "line secret"])
        #expect(after == """
            [distutils]
            index-servers =
                pypi
                testpypi
                private

            [pypi]
            username = __token__

            [testpypi]

            [private]
            repository = HTTPS://Packages.Example.com/legacy/
            username = ada

            """)
    }

    @Test func npmrcTokensAreFoundAndVariablesLeftAlone() throws {
        let path = try fixture.write(".npmrc", """
            registry=https://registry.npmjs.org/
            //registry.npmjs.org/:_authToken=npm_QZ8cD2e1secret
            //npm.pkg.github.com/:_authToken=${GITHUB_TOKEN}
            ; a comment
            //registry.example.com/npm/:username=ada
            //registry.example.com/npm/:_password="c2VjcmV0LXBhc3N3b3Jk"
            @scope:registry=https://registry.example.com/npm/
            """)
        let (original, found) = try fixture.scan(path, as: .npmrc)
        #expect(found.map(\.origin) == [.npmRegistry(uri: "//registry.npmjs.org/", field: "_authToken"),
                                        .npmRegistry(uri: "//registry.example.com/npm/", field: "_password")])
        #expect(found.map(\.user) == [nil, "ada"])
        #expect(try ImportNaming.destination(for: found[0])?.key == ItemKey(service: "npm://registry.npmjs.org/", account: "_authToken"))
        let after = try fixture.rewritten(original, found, secrets: ["npm_QZ8", "c2VjcmV0"])
        #expect(after == """
            registry=https://registry.npmjs.org/
            //npm.pkg.github.com/:_authToken=${GITHUB_TOKEN}
            ; a comment
            //registry.example.com/npm/:username=ada
            @scope:registry=https://registry.example.com/npm/
            """)
    }
}
