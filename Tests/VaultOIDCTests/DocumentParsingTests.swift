import BoundedJSON
import Foundation
import Testing
@testable import VaultOIDC

/// The discovery document and key set parsers: exact issuer, the https rule, size caps, key types.
@Suite(.timeLimit(.minutes(20))) struct DocumentParsingTests {
    let issuer = URL(string: "https://id.sorted.example")!
    let jwksURL = URL(string: "https://id.sorted.example/jwks")!

    func discovery(_ edit: (inout [String: JSONValue]) -> Void = { _ in }) -> [UInt8] {
        var members: [String: JSONValue] = [
            "issuer": "https://id.sorted.example", "token_endpoint": "https://id.sorted.example/token",
            "revocation_endpoint": "https://id.sorted.example/revoke", "jwks_uri": "https://id.sorted.example/jwks",
            "id_token_signing_alg_values_supported": ["RS256", "ES256"],
        ]
        edit(&members)
        return JSONValue.object(members).serialized()
    }

    @Test func aDiscoveryDocumentGivesItsEndpointsAndAlgorithms() throws {
        let document = try OIDCDiscoveryDocument(parsing: discovery(), expectedIssuer: issuer)
        #expect(document.tokenEndpoint.absoluteString == "https://id.sorted.example/token")
        #expect(document.revocationEndpoint?.absoluteString == "https://id.sorted.example/revoke")
        #expect(document.jwksURI == jwksURL)
        #expect(document.idTokenSigningAlgorithms == ["RS256", "ES256"])
        #expect(try OIDCDiscoveryDocument(parsing: discovery { $0["revocation_endpoint"] = nil }, expectedIssuer: issuer).revocationEndpoint == nil)
    }

    @Test func aDiscoveryDocumentNamingAnotherIssuerIsRefused() {
        for other in ["https://id.sorted.example/", "https://ID.sorted.example", "https://evil.example", "http://id.sorted.example"] {
            #expect(oidcErrorCode { _ = try OIDCDiscoveryDocument(parsing: discovery { $0["issuer"] = .string(other) }, expectedIssuer: issuer) } == .issuerMismatch, "\(other)")
        }
    }

    @Test func everyEndpointMustPassTheHttpsRule() {
        for member in ["token_endpoint", "revocation_endpoint", "jwks_uri"] {
            for bad in ["http://id.sorted.example/x", "http://127.evil.example/x", "https://user:pw@id.sorted.example/x", "/relative"] {
                let body = discovery { $0[member] = .string(bad) }
                #expect(oidcErrorCode { _ = try OIDCDiscoveryDocument(parsing: body, expectedIssuer: issuer) } == .malformedDocument, "\(member) \(bad)")
            }
        }
    }

    /// An endpoint elsewhere than the issuer (another scheme, host or port; a loopback service) is
    /// refused: the document would otherwise aim the daemon's requests, with the code, the verifier
    /// and the client secret, at whatever listens there.
    @Test func everyEndpointMustBeOnTheIssuersSchemeHostAndPort() throws {
        let members = ["token_endpoint", "revocation_endpoint", "jwks_uri", "authorization_endpoint", "device_authorization_endpoint"]
        for member in members {
            for elsewhere in ["http://127.0.0.1:8080/jwks", "http://localhost:5432/x", "https://id.sorted.example:8443/x",
                              "https://other.sorted.example/x", "https://evil.example/x"] {
                let body = discovery { $0[member] = .string(elsewhere) }
                #expect(oidcErrorCode { _ = try OIDCDiscoveryDocument(parsing: body, expectedIssuer: issuer) } == .malformedDocument, "\(member) \(elsewhere)")
            }
            let here = try OIDCDiscoveryDocument(parsing: discovery { $0[member] = "https://ID.sorted.example:443/here" }, expectedIssuer: issuer)
            #expect([here.tokenEndpoint, here.revocationEndpoint, here.jwksURI, here.authorizationEndpoint, here.deviceAuthorizationEndpoint]
                .contains { $0?.path == "/here" }, "the issuer's own host, in any case and with its default port written, is fine: \(member)")
        }
        // A loopback issuer (a test or a local provider): its endpoints on its own port only.
        let local = URL(string: "http://127.0.0.1:9000/o")!
        func localDocument(_ token: String) -> [UInt8] {
            JSONValue.object(["issuer": "http://127.0.0.1:9000/o", "token_endpoint": .string(token), "jwks_uri": "http://127.0.0.1:9000/o/jwks",
                              "id_token_signing_alg_values_supported": ["RS256"]]).serialized()
        }
        #expect(try OIDCDiscoveryDocument(parsing: localDocument("http://127.0.0.1:9000/o/token"), expectedIssuer: local).tokenEndpoint.port == 9000)
        #expect(oidcErrorCode { _ = try OIDCDiscoveryDocument(parsing: localDocument("http://127.0.0.1:9001/o/token"), expectedIssuer: local) } == .malformedDocument)
    }

    @Test func missingMembersAndNonJSONAreMalformed() {
        for member in ["token_endpoint", "jwks_uri", "id_token_signing_alg_values_supported", "issuer"] {
            #expect(oidcErrorCode { _ = try OIDCDiscoveryDocument(parsing: discovery { $0[member] = nil }, expectedIssuer: issuer) } == .malformedDocument)
        }
        #expect(oidcErrorCode { _ = try OIDCDiscoveryDocument(parsing: Array("<html>".utf8), expectedIssuer: issuer) } == .malformedDocument)
    }

    @Test func documentsOverSixtyFourKiBAreRefused() {
        let padded = discovery { $0["x_padding"] = .string(String(repeating: "x", count: 64 * 1024)) }
        #expect(oidcErrorCode { _ = try OIDCDiscoveryDocument(parsing: padded, expectedIssuer: issuer) } == .malformedDocument)
        let keys = Array(#"{"keys":[],"x":""#.utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: 64 * 1024) + Array(#""}"#.utf8)
        #expect(oidcErrorCode { _ = try JSONWebKeySet(parsing: keys, from: jwksURL) } == .malformedDocument)
    }

    @Test func theDiscoveryURLDropsATrailingSlashAndTheIssuerMustBeHttps() throws {
        #expect(try OIDCDiscoveryDocument.discoveryURL(forIssuer: URL(string: "https://id.example/tenant/")!).absoluteString
            == "https://id.example/tenant/.well-known/openid-configuration")
        #expect(try OIDCDiscoveryDocument.discoveryURL(forIssuer: issuer).absoluteString == "https://id.sorted.example/.well-known/openid-configuration")
        for bad in ["http://id.example", "https://id.example?tenant=1", "https://id.example#x", "id.example"] {
            #expect(oidcErrorCode { _ = try OIDCDiscoveryDocument.discoveryURL(forIssuer: URL(string: bad)!) } == .malformedDocument, "\(bad)")
        }
    }

    @Test func unknownKeyTypesCurvesAndEncryptionKeysAreSkipped() throws {
        let signer = TestSigner()
        var keys = try JSONValue.parse(signer.keySetJSON())["keys"]!.arrayValue!
        keys += [
            ["kty": "oct", "kid": "hmac", "k": "c2VjcmV0"],
            ["kty": "OKP", "crv": "Ed25519", "kid": "ed", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"],
            ["kty": "EC", "crv": "P-384", "kid": "p384", "x": "AA", "y": "AA"],
            ["kty": "RSA", "kid": "enc", "use": "enc", "n": "AA", "e": "AQAB"],
        ]
        let set = try JSONWebKeySet(parsing: JSONValue.object(["keys": .array(keys)]).serialized(), from: jwksURL)
        #expect(set.keys.map(\.keyID) == ["ec-1", "rsa-1"])
        #expect(set.keys.map(\.signingAlgorithm) == [.es256, .rs256])
    }

    @Test func weakOrBrokenRSAAndP256KeysMakeTheSetMalformed() throws {
        let weak = try WeakRSAKey.modulus1024()
        for key: JSONValue in [
            ["kty": "RSA", "kid": "weak", "n": .string(weak), "e": "AQAB"],
            ["kty": "RSA", "kid": "no-n", "e": "AQAB"],
            ["kty": "RSA", "kid": "padded", "n": "AQAB==", "e": "AQAB"],
            ["kty": "EC", "crv": "P-256", "kid": "short", "x": "AQAB", "y": "AQAB"],
            ["kty": "EC", "crv": "P-256", "kid": "off-curve", "x": .string(Base64URL.encode([UInt8](repeating: 1, count: 32))),
             "y": .string(Base64URL.encode([UInt8](repeating: 1, count: 32)))],
        ] {
            let body = JSONValue.object(["keys": [key]]).serialized()
            #expect(oidcErrorCode { _ = try JSONWebKeySet(parsing: body, from: jwksURL) } == .malformedDocument, "\(key["kid"]?.stringValue ?? "")")
        }
        #expect(oidcErrorCode { _ = try JSONWebKeySet(parsing: Array(#"{"keys":{}}"#.utf8), from: jwksURL) } == .malformedDocument)
    }
}
