import CredentialHelpers
import Foundation
import Testing
import TestSupport
import VaultCore
import VaultCrypto
import VaultTesting
@testable import VaultImport

/// git's store file, written by git's own `credential-store`, read, named and rewritten.
@Suite(.timeLimit(.minutes(20)), .enabled(if: CIRequirement.runs(where: GitTool.path != nil), Comment(rawValue: GitTool.missing)))
struct GitCredentialsImportTests {
    let fixture: ImportFixture

    init() throws {
        try CIRequirement.require(GitTool.path != nil, GitTool.missing)
        fixture = try ImportFixture()
    }

    /// Runs `git credential-store --file FILE store` with the credential on stdin, never on argv.
    func gitStore(_ file: String, _ message: String, useHttpPath: Bool = false) throws {
        let arguments = [GitTool.path!] + (useHttpPath ? ["-c", "credential.useHttpPath=true"] : []) + ["credential-store", "--file", file, "store"]
        let (status, _, error) = try Subprocess.run(arguments, environment: ["HOME": fixture.directory, "PATH": "/usr/bin:/bin"],
                                                    input: Data(message.utf8), timeout: .seconds(60))
        #expect(status == 0, "git credential-store failed: \(String(decoding: error, as: UTF8.self))")
    }

    @Test func whatGitStoredIsFoundNamedAndRemovedLineByLine() throws {
        let file = fixture.directory + "/git-credentials"
        try gitStore(file, "protocol=https\nhost=git.example.com:8443\npath=team/repo.git\nusername=ada@example.com\npassword=p@ss:w/rd %+é\n\n",
                     useHttpPath: true)
        try gitStore(file, "protocol=https\nhost=github.com\nusername=ada\npassword=gho_16C7e42F292c6912E7710c838347Ae178B4a\n\n")
        let before = try fixture.contents(file)
        let (original, found) = try fixture.scan(file, as: .gitCredentials)

        #expect(found.count == 2)
        let github = try #require(found.first { $0.origin == .git(protocol: "https", host: "github.com", path: nil) })
        #expect(github.user == "ada")
        #expect(text(github.secret) == "gho_16C7e42F292c6912E7710c838347Ae178B4a")
        let team = try #require(found.first { $0.origin == .git(protocol: "https", host: "git.example.com:8443", path: "team/repo.git") })
        #expect(team.user == "ada@example.com")
        #expect(text(team.secret) == "p@ss:w/rd %+é")
        #expect(!"\(team)".contains("p@ss"), "description shows the secret")

        let names = try found.map { try #require(try ImportNaming.destination(for: $0)) }
        #expect(names.map(\.key.service).sorted() == ["git:https://git.example.com:8443/team/repo.git", "git:https://github.com"])
        #expect(names.map(\.key.account).sorted() == ["ada", "ada@example.com"])

        let after = try fixture.rewritten(original, found, secrets: ["gho_16C7e42F292c6912E7710c838347Ae178B4a", "p@ss:w/rd", "p%40ss"])
        #expect(after.isEmpty)
        #expect(!before.isEmpty)
    }

    @Test func linesGitWouldSkipAreKeptByteForByte() throws {
        let file = try fixture.write("git-credentials", "https://ada:tok3n@example.org\r\nnot a url\nhttps://example.net\n\nhttps://bob:s3cret@example.com/x/")
        let (original, found) = try fixture.scan(file, as: .gitCredentials)
        #expect(found.map(\.origin) == [.git(protocol: "https", host: "example.org", path: nil),
                                        .git(protocol: "https", host: "example.com", path: "x")])
        let after = try fixture.rewritten(original, found, secrets: ["tok3n", "s3cret"])
        #expect(after == "not a url\nhttps://example.net\n\n")
    }

    @Test func gitsOwnHelperFindsTheImportedCredentialAtOnce() async throws {
        let file = fixture.directory + "/git-credentials"
        try gitStore(file, "protocol=https\nhost=git.example.com:8443\nusername=ada\npassword=hunter2 with spaces\n\n")
        let (_, found) = try fixture.scan(file, as: .gitCredentials)
        let credential = try #require(found.first)
        let destination = try #require(try ImportNaming.destination(for: credential))
        let vault = InMemoryTokenStore()
        try await vault.store(credential.secret, for: destination.key, options: StoreOptions(label: destination.label))

        let helper = GitCredentialStore(store: vault, autoLogin: { _ in throw ImportFixtureError("no logins here") })
        var notes: [String] = []
        for request in ["protocol=https\nhost=git.example.com:8443\n", "protocol=https\nhost=git.example.com:8443\nusername=ada\n"] {
            let answer = try await helper.get(try GitCredentialMessage.parse(SecureBytes(copying: Array(request.utf8))), notes: &notes)
            #expect(try #require(answer).constantTimeEquals(Array("username=ada\npassword=hunter2 with spaces\n".utf8)))
        }
    }
}

enum GitTool {
    static let path: String? = ["/usr/bin/git", "/usr/local/bin/git", "/bin/git"].first { access($0, X_OK) == 0 }
    static let missing = "git (apt-get install git)"
}
