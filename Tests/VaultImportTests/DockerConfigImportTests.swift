import CredentialHelpers
import Foundation
import Testing
import VaultCore
import VaultCrypto
import VaultTesting
@testable import VaultImport

/// docker's config.json as `docker login` writes it without a credential store: Go's
/// `json.MarshalIndent(config, "", "\t")`, map keys sorted, `auth` before `identitytoken`.
@Suite(.timeLimit(.minutes(20))) struct DockerConfigImportTests {
    let fixture: ImportFixture
    init() throws { fixture = try ImportFixture() }

    static func auth(_ user: String, _ password: String) -> String { Data("\(user):\(password)".utf8).base64EncodedString() }

    static let hub = auth("ada", "dckr_pat_2b3e36beeb386dfdaacb9b46004ccb7c")
    static let ghcr = auth("ada", "ghp_unused_because_of_the_token")
    static let quay = auth("ada+robot", "QUAY9ROBOT0TOKEN")

    static let written = """
        {
        \t"auths": {
        \t\t"ghcr.io": {
        \t\t\t"auth": "\(ghcr)",
        \t\t\t"identitytoken": "eyJhbGciOiJSUzI1NiJ9.identity.token"
        \t\t},
        \t\t"https://index.docker.io/v1/": {
        \t\t\t"auth": "\(hub)"
        \t\t},
        \t\t"quay.io": {
        \t\t\t"auth": "\(quay)",
        \t\t\t"email": "ada@example.com"
        \t\t},
        \t\t"registry.example.com": {}
        \t},
        \t"credHelpers": {
        \t\t"gcr.io": "gcloud"
        \t}
        }
        """

    @Test func loginsAreFoundWithTheUsersAndSecretsDockerWouldSend() throws {
        let path = try fixture.write("docker/config.json", Self.written)
        let original = try #require(try ImportFile.read(path: path))
        let scan = try original.withUnsafeBytes { try DockerConfigFile.parse($0, path: path) }
        #expect(scan.credentialStore == nil)
        #expect(scan.credentialHelpers == ["gcr.io": "gcloud"])
        #expect(scan.credentials.map(\.origin) == [
            .dockerRegistry(serverURL: "ghcr.io", identityToken: true),
            .dockerRegistry(serverURL: "https://index.docker.io/v1/", identityToken: false),
            .dockerRegistry(serverURL: "quay.io", identityToken: false),
        ])
        #expect(scan.credentials.map { text($0.secret) } == ["eyJhbGciOiJSUzI1NiJ9.identity.token", "dckr_pat_2b3e36beeb386dfdaacb9b46004ccb7c", "QUAY9ROBOT0TOKEN"])
        let names = try scan.credentials.map { try #require(try ImportNaming.destination(for: $0)) }
        #expect(names.map(\.key) == [try ItemKey(service: "docker:ghcr.io", account: "<token>"),
                                     try ItemKey(service: "docker:https://index.docker.io/v1/", account: "ada"),
                                     try ItemKey(service: "docker:quay.io", account: "ada+robot")])
        #expect(names.allSatisfy { $0.label == DockerCredentialStore.label })
    }

    @Test func rewritingRemovesTheSecretMembersAndTheirCommasOnly() throws {
        let path = try fixture.write("docker/config.json", Self.written)
        let (original, found) = try fixture.scan(path, as: .dockerConfig)
        let after = try fixture.rewritten(original, found, secrets: [Self.hub, Self.ghcr, Self.quay, "identity.token", "dckr_pat", "QUAY9ROBOT"])
        #expect(after == """
            {
            \t"auths": {
            \t\t"ghcr.io": {},
            \t\t"https://index.docker.io/v1/": {},
            \t\t"quay.io": {
            \t\t\t"email": "ada@example.com"
            \t\t},
            \t\t"registry.example.com": {}
            \t},
            \t"credHelpers": {
            \t\t"gcr.io": "gcloud"
            \t}
            }
            """)
    }

    @Test func aMemberInTheMiddleOrAtTheEndTakesOnlyItsOwnComma() throws {
        let path = try fixture.write("config.json", #"{"auths":{"a.example":{"email":"x","auth":"\#(Self.auth("u", "S1"))","other":1},"b.example":{"email":"y","identitytoken":"S2"}}}"#)
        let (original, found) = try fixture.scan(path, as: .dockerConfig)
        let after = try fixture.rewritten(original, found, secrets: [])
        #expect(after == #"{"auths":{"a.example":{"email":"x","other":1},"b.example":{"email":"y"}}}"#)
    }

    @Test func settingTheCredentialStoreKeepsTheRestAndStaysJSON() throws {
        let path = try fixture.write("docker/config.json", Self.written)
        let (original, found) = try fixture.scan(path, as: .dockerConfig)
        let edit = try DockerConfigFile.settingCredentialStore("sortedvault", in: original, path: path)
        let after = try fixture.rewritten(original, found, extraEdits: [edit], secrets: [Self.hub])
        #expect(after.hasPrefix("{\n\t\"credsStore\": \"sortedvault\",\n\t\"auths\": {\n"))
        let reread = try JSONSerialization.jsonObject(with: Data(after.utf8)) as? [String: Any]
        #expect(reread?["credsStore"] as? String == "sortedvault")

        let replacing = try fixture.write("other.json", #"{"credsStore": "desktop"}"#)
        let (again, none) = try fixture.scan(replacing, as: .dockerConfig)
        let replaced = try SourceRewriter.removing(none, from: again,
                                                   extraEdits: [try DockerConfigFile.settingCredentialStore("sortedvault", in: again, path: replacing)])
        #expect(String(decoding: replaced, as: UTF8.self) == #"{"credsStore": "sortedvault"}"#)
    }

    @Test func dockersOwnHelperFindsTheImportedLoginAtOnce() async throws {
        let path = try fixture.write("docker/config.json", Self.written)
        let (_, found) = try fixture.scan(path, as: .dockerConfig)
        let vault = InMemoryTokenStore()
        for credential in found {
            let destination = try #require(try ImportNaming.destination(for: credential))
            try await vault.store(credential.secret, for: destination.key, options: StoreOptions(label: destination.label))
        }
        let helper = DockerCredentialStore(store: vault)
        let hub = try await helper.get(SecureBytes(copying: Array("https://index.docker.io/v1/\n".utf8)))
        #expect(text(hub) == #"{"ServerURL":"https://index.docker.io/v1/","Username":"ada","Secret":"dckr_pat_2b3e36beeb386dfdaacb9b46004ccb7c"}"# + "\n")
        // Go escapes < and > in JSON strings; docker reads the account back as "<token>".
        let ghcr = try await helper.get(SecureBytes(copying: Array("ghcr.io".utf8)))
        #expect(text(ghcr) == #"{"ServerURL":"ghcr.io","Username":"\u003ctoken\u003e","Secret":"eyJhbGciOiJSUzI1NiJ9.identity.token"}"# + "\n")
    }

    @Test func invalidJSONAndBadAuthAreRefusedByName() throws {
        for (document, words) in [
            (#"{"auths": {"a": {"auth": "x"}}"#, "not docker's JSON"),
            (#"{"auths": {"a": {"auth": "bm90LWEtcGFpcg=="}}}"#, "user:password"),
            (#"{"auths": {"a": {"auth": "%%%"}}}"#, "not base64"),
            (#"{"auths": {"a": {}}, "auths": {}}"#, "same key twice"),
            (#"{"auths": {"a": {"auth": "eDp5"}}} trailing"#, "not"),
            (#"{"auths":{"a":{"x":"# + String(repeating: "[", count: 100) + String(repeating: "]", count: 100) + "}}}", "deeper"),
        ] {
            let path = try fixture.write("bad.json", document)
            let error = #expect(throws: ImportError.self) { try fixture.scan(path, as: .dockerConfig) }
            #expect(error?.code == .malformed)
            #expect(error?.reason.contains(words) == true, "\(error?.reason ?? "") lacks \(words)")
        }
    }
}
