import BoundedJSON
import Foundation
import Testing
import TestSupport
import VaultCrypto
@testable import VaultOAuthHTTP
import NIOCore
import VaultOIDC
import VaultSession

/// The rules the transport holds against a provider that breaks them (`Tests/Support/http-misbehaving`):
/// no redirect followed, answers and headers bounded, nothing but what was asked sent.
@Suite(.timeLimit(.minutes(20))) struct ProviderHTTPRulesTests {
    let server: ScriptServer
    let transport = HTTPClientTransport(timeout: 60)

    init() throws {
        server = try ScriptServer("http-misbehaving/server.py")
    }

    func post(_ path: String, authorization: String? = nil) async throws -> OAuthHTTPResponse {
        try await transport.post(OAuthHTTPRequest(url: URL(string: "http://127.0.0.1:\(server.port)\(path)")!,
                                                  body: SecureBytes(copying: Array("grant_type=refresh_token&refresh_token=r1".utf8)),
                                                  authorization: authorization.map { SecureBytes(copying: Array($0.utf8)) }))
    }

    func landings() async throws -> Int {
        let fetcher = HTTPDocumentFetcher(deadline: .seconds(60))
        let (_, body) = try await fetcher.fetch(URL(string: "http://127.0.0.1:\(server.port)/stats")!)
        return Int(try JSONValue.parse(body).objectValue?["landing"]?.intValue ?? -1)
    }

    @Test func aRedirectIsHandedBackNotFollowed() async throws {
        let answer = try await post("/redirect", authorization: "Basic c2VjcmV0")
        #expect(answer.status == 307)
        #expect(try await landings() == 0, "the transport followed the redirect and sent the credentials on")
        let fetcher = HTTPDocumentFetcher(deadline: .seconds(60))
        let (status, _) = try await fetcher.fetch(URL(string: "http://127.0.0.1:\(server.port)/redirect")!)
        #expect(status == 307)
        #expect(try await landings() == 0, "the document fetcher followed the redirect")
    }

    @Test(arguments: ["/big-body", "/big-chunked"])
    func anAnswerLargerThanTheCapIsRefused(path: String) async throws {
        let limit = OAuthHTTPResponse.maximumBodyBytes
        let fits = try await post("\(path)?n=\(limit)")
        #expect(fits.status == 200 && fits.body.count == limit)
        do {
            _ = try await post("\(path)?n=\(limit + 1)")
            Issue.record("an answer of \(limit + 1) bytes was read")
        } catch let error as OAuthTransportError {
            #expect(error.description.contains("larger than \(limit) bytes"), "\(error)")
        }
    }

    @Test func aHeaderLargerThanTheParsersLimitIsRefused() async throws {
        #expect(try await post("/big-headers?n=1000").status == 200)
        do {
            _ = try await post("/big-headers?n=200000")
            Issue.record("an answer with a 200 KB header was read")
        } catch let error as OAuthTransportError {
            #expect(error.description.contains("127.0.0.1"), "\(error)")
        }
    }

    /// What goes out: POST, the content type, `Accept: application/json`, `no-store`, the
    /// authorization, the body; no cookie, no proxy header, no compression asked for.
    @Test func theRequestCarriesWhatWasAskedAndNothingElse() async throws {
        let answer = try await post("/echo", authorization: "Basic c2VjcmV0")
        let echo = try JSONValue.parse(answer.body.withUnsafeBytes { Array($0) }).objectValue
        let headers = echo?["headers"]?.objectValue ?? [:]
        #expect(echo?["method"]?.stringValue == "POST")
        #expect(headers["content-type"]?.stringValue == "application/x-www-form-urlencoded")
        #expect(headers["accept"]?.stringValue == "application/json")
        #expect(headers["cache-control"]?.stringValue == "no-store")
        #expect(headers["authorization"]?.stringValue == "Basic c2VjcmV0")
        #expect(echo?["bodyLength"]?.intValue == 41)
        for absent in ["cookie", "proxy-authorization", "accept-encoding"] {
            #expect(headers[absent] == nil, "the request carried \(absent)")
        }
    }

    /// A secret query parameter (Firebase's `key`) is joined to the URL only when sending, and no
    /// error text ever shows it.
    @Test func aSecretQueryParameterIsSentButNeverShown() async throws {
        var request = OAuthHTTPRequest(url: URL(string: "http://127.0.0.1:\(server.port)/echo")!, body: SecureBytes(copying: Array("a=b".utf8)),
                                       secretQuery: [SecretParameter(name: "key", value: SecureBytes(copying: Array("AIzaSECRET".utf8)))])
        let answer = try await transport.post(request)
        let echo = try JSONValue.parse(answer.body.withUnsafeBytes { Array($0) }).objectValue
        #expect(echo?["path"]?.stringValue == "/echo?key=AIzaSECRET")
        request.url = URL(string: "http://127.0.0.1:\(server.port)/big-body?n=70000")!
        do {
            _ = try await transport.post(request)
            Issue.record("a 70,000-byte answer was read")
        } catch {
            #expect(!"\(error)".contains("AIzaSECRET"), "the error shows the secret: \(error)")
        }
    }

    /// Nothing listens: the request fails at once, known never to have left.
    @Test func aClosedPortFailsAtOnceAsNeverSent() async throws {
        let closed = try ScriptServer("http-misbehaving/server.py")
        let port = closed.port
        _ = consume closed
        do {
            _ = try await transport.post(OAuthHTTPRequest(url: URL(string: "http://127.0.0.1:\(port)/echo")!, body: SecureBytes(copying: [])))
            Issue.record("a closed port answered")
        } catch let error as OAuthTransportError {
            #expect(!error.requestMayHaveArrived, "\(error)")
            #expect(error.description.contains("could not be reached"), "\(error)")
        }
    }
}

/// This host running out of descriptors, memory or buffers fails a `socket()` before a byte leaves:
/// such a failure is never a lost answer, or anyone who can exhaust the daemon's descriptors could
/// end its logins (each lost answer puts a login in doubt).
@Suite(.timeLimit(.minutes(20))) struct LocalExhaustionTests {
    @Test(arguments: [EMFILE, ENFILE, ENOBUFS, ENOMEM])
    func runningOutOfDescriptorsOrMemoryIsKnownNeverToHaveBeenSent(code: Int32) async {
        let error = await ProviderHTTPClient.describeForTesting(IOError(errnoCode: code, reason: "socket"), host: "login.example.com")
        #expect(!error.requestMayHaveArrived, "\(error)")
    }

    @Test func aConnectionResetAfterSendingMayHaveArrived() async {
        let error = await ProviderHTTPClient.describeForTesting(IOError(errnoCode: ECONNRESET, reason: "read"), host: "login.example.com")
        #expect(error.requestMayHaveArrived, "\(error)")
    }
}
