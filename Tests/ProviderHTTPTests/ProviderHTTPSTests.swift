import BoundedJSON
import Foundation
import Testing
import TestSupport
import VaultCrypto
import VaultOAuthHTTP
import VaultSession

/// The transport against a real HTTPS provider: django-oauth-toolkit behind a TLS front on
/// loopback (`Tests/Support/https-front`), with a CA and certificates the front makes for each case.
/// A good certificate carries a real refresh; each bad one is refused before the request leaves,
/// with an error that names the reason.
@Suite(.timeLimit(.minutes(20))) struct ProviderHTTPSTests {
    /// The provider, a refresh token it issued (over plain loopback HTTP, as a sign-in gives it),
    /// and a TLS front presenting `certificate`.
    struct World {
        let provider: OAuthTestProvider
        let front: ScriptServer
        let refreshToken: String

        init(certificate: String, http2: Bool = false) async throws {
            provider = try OAuthTestProvider()
            front = try ScriptServer("https-front/front.py", ["--certificate", certificate, "--backend-port", "\(provider.port)"]
                                     + (http2 ? ["--http2"] : []))
            let answer = try JSONValue.parse(try await provider.signIn())
            guard let token = answer.objectValue?["refresh_token"]?.stringValue else { throw HarnessError("the sign-in gave no refresh token") }
            refreshToken = token
        }

        var caFile: String { front.stateDirectory + "/ca.pem" }

        /// A refresh request to the token endpoint through the front, as the session engine makes it.
        func refresh(host: String = "127.0.0.1") -> OAuthHTTPRequest {
            let basic = Data("\(OAuthTestProvider.clientID):\(OAuthTestProvider.clientSecret)".utf8).base64EncodedString()
            return OAuthHTTPRequest(url: URL(string: "https://\(host):\(front.port)/o/token/")!,
                                    body: SecureBytes(copying: Array("grant_type=refresh_token&refresh_token=\(refreshToken)".utf8)),
                                    authorization: SecureBytes(copying: Array("Basic \(basic)".utf8)))
        }

        /// Sends the refresh and returns the error it fails with.
        func refused(host: String = "127.0.0.1", trust: [String]? = nil) async throws -> OAuthTransportError {
            let transport = HTTPClientTransport(timeout: 60, trust: ProviderTrust(additionalRoots: trust ?? [caFile]))
            do {
                let answer = try await transport.post(refresh(host: host))
                throw HarnessError("the request was answered (HTTP \(answer.status)) through a certificate that should be refused")
            } catch let error as OAuthTransportError {
                return error
            }
        }
    }

    @Test func aCertificateFromATrustedCAForTheHostCarriesARealRefresh() async throws {
        let world = try await World(certificate: "valid")
        let transport = HTTPClientTransport(timeout: 60, trust: ProviderTrust(additionalRoots: [world.caFile]))
        let answer = try await transport.post(world.refresh())
        let body = answer.body.withUnsafeBytes { Array($0) }
        #expect(answer.status == 200, "\(String(decoding: body, as: UTF8.self))")
        let tokens = try JSONValue.parse(body).objectValue
        #expect(tokens?["access_token"]?.stringValue?.isEmpty == false)
        #expect(tokens?["refresh_token"]?.stringValue != world.refreshToken, "the provider rotates the refresh token")
        #expect(try await world.provider.refreshRequests() == 1)
    }

    /// A provider that offers only HTTP/2 (ALPN `h2`): the transport speaks it, and the refresh is
    /// the same real one.
    @Test func aProviderThatSpeaksOnlyHTTP2CarriesARealRefresh() async throws {
        let world = try await World(certificate: "valid", http2: true)
        let transport = HTTPClientTransport(timeout: 60, trust: ProviderTrust(additionalRoots: [world.caFile]))
        let answer = try await transport.post(world.refresh())
        let body = answer.body.withUnsafeBytes { Array($0) }
        #expect(answer.status == 200, "\(String(decoding: body, as: UTF8.self))")
        #expect(try JSONValue.parse(body).objectValue?["access_token"]?.stringValue?.isEmpty == false)
        #expect(try await world.provider.refreshRequests() == 1)
        let served = try String(contentsOfFile: world.front.stateDirectory + "/requests", encoding: .utf8)
        #expect(served == "h2 POST /o/token/\n", "\(served)")
    }

    @Test func aCertificateForAnotherHostIsRefusedNamingTheHost() async throws {
        let world = try await World(certificate: "wrong-host")
        let error = try await world.refused()
        #expect(error.description.contains("does not name 127.0.0.1"), "\(error)")
        #expect(!error.requestMayHaveArrived)
        #expect(try await world.provider.refreshRequests() == 0)
    }

    @Test func anExpiredCertificateIsRefusedAsExpired() async throws {
        let world = try await World(certificate: "expired")
        let error = try await world.refused()
        #expect(error.description.contains("has expired"), "\(error)")
        #expect(!error.requestMayHaveArrived)
        #expect(try await world.provider.refreshRequests() == 0)
    }

    @Test func aCertificateFromAnUnknownCAIsRefusedAsUntrusted() async throws {
        let world = try await World(certificate: "unknown-ca")
        let error = try await world.refused()
        #expect(error.description.contains("is not signed by a certificate authority this machine trusts"), "\(error)")
        #expect(error.description.contains("a CA nobody trusts"), "the error names the issuer: \(error)")
        #expect(try await world.provider.refreshRequests() == 0)
    }

    @Test func aSelfSignedCertificateIsRefusedAsSelfSigned() async throws {
        let world = try await World(certificate: "self-signed")
        let error = try await world.refused()
        #expect(error.description.contains("is self-signed"), "\(error)")
        #expect(try await world.provider.refreshRequests() == 0)
    }

    /// The test CA is not among the system's roots: without it named, the good certificate fails too.
    @Test func theSystemRootsAloneDoNotTrustTheTestCA() async throws {
        let world = try await World(certificate: "valid")
        let error = try await world.refused(trust: [])
        #expect(error.description.contains("is not signed by a certificate authority this machine trusts"), "\(error)")
    }

    /// Plain http leaves the machine only in clear: it is refused before any connection. The address
    /// is TEST-NET-1 (RFC 5737): a connection attempt would hang until the deadline, an hour here.
    @Test func plainHTTPToAnotherHostIsRefusedBeforeAnyConnection() async throws {
        let transport = HTTPClientTransport(timeout: 3600)
        let request = OAuthHTTPRequest(url: URL(string: "http://192.0.2.1/o/token/")!, body: SecureBytes(copying: Array("x=1".utf8)))
        do {
            _ = try await transport.post(request)
            Issue.record("a plain http request to 192.0.2.1 was sent")
        } catch let error as OAuthTransportError {
            #expect(error.description.contains("was not sent") && error.description.contains("https"), "\(error)")
            #expect(!error.requestMayHaveArrived)
        }
    }
}
