import BoundedJSON
import Crypto
import Foundation
import VaultCrypto
import _CryptoExtras
@testable import VaultOIDC

/// Keys made in the test with swift-crypto, published as a JWKS, and id tokens signed with them:
/// for the algorithms and cases the real provider cannot produce (ES256, alg confusion, odd claims).
struct TestSigner {
    static let issuer = URL(string: "https://id.sorted.example")!
    static let clientID = "sorted-app"

    let p256 = P256.Signing.PrivateKey()
    let rsa: _RSA.Signing.PrivateKey

    /// One RSA key per test run: 2048-bit generation is the slow part.
    private static let sharedRSA = try! _RSA.Signing.PrivateKey(keySize: .bits2048)

    init() { rsa = Self.sharedRSA }

    /// The public half as a JWKS document: `ec-1` (P-256) and `rsa-1` (RSA), or only the key `only`.
    func keySetJSON(only: String? = nil) -> [UInt8] {
        let raw = Array(p256.publicKey.rawRepresentation)
        let primitives = try! rsa.publicKey.getKeyPrimitives()
        let keys: [JSONValue] = [
            .object(["kty": "EC", "crv": "P-256", "kid": "ec-1", "use": "sig", "alg": "ES256",
                     "x": .string(Base64URL.encode(raw[0..<32])), "y": .string(Base64URL.encode(raw[32..<64]))]),
            .object(["kty": "RSA", "kid": "rsa-1", "use": "sig", "alg": "RS256",
                     "n": .string(Base64URL.encode(primitives.modulus)), "e": .string(Base64URL.encode(primitives.publicExponent))]),
        ]
        return JSONValue.object(["keys": .array(keys.filter { only == nil || $0["kid"]?.stringValue == only })]).serialized()
    }

    func keySet(only: String? = nil) -> JSONWebKeySet {
        try! JSONWebKeySet(parsing: keySetJSON(only: only), from: URL(string: "https://id.sorted.example/jwks")!)
    }

    /// Claims that pass every check at `now`, changed by `edit`.
    static func claims(now: Date, _ edit: (inout [String: JSONValue]) -> Void = { _ in }) -> [String: JSONValue] {
        var claims: [String: JSONValue] = [
            "iss": .string(issuer.absoluteString), "aud": .string(clientID), "sub": "user-42",
            "iat": .int(Int64(now.timeIntervalSince1970)), "exp": .int(Int64(now.timeIntervalSince1970) + 600),
        ]
        edit(&claims)
        return claims
    }

    /// A compact JWS with `header` and `claims`, signed as `alg` says (or as `signWith` overrides).
    func token(alg: String, kid: String?, claims: [String: JSONValue], header extra: [String: JSONValue] = [:]) -> SecureBytes {
        var header: [String: JSONValue] = ["alg": .string(alg), "typ": "JWT"]
        if let kid { header["kid"] = .string(kid) }
        header.merge(extra) { _, new in new }
        let input = Base64URL.encode(JSONValue.object(header).serialized()) + "." + Base64URL.encode(JSONValue.object(claims).serialized())
        let signature: [UInt8]
        switch alg {
        case "ES256": signature = Array(try! p256.signature(for: Array(input.utf8)).rawRepresentation)
        case "RS256": signature = Array(try! rsa.signature(for: SHA256.hash(data: Array(input.utf8)), padding: .insecurePKCS1v1_5).rawRepresentation)
        case "HS256":
            // The classic confusion attack: the RSA public key used as the HMAC secret.
            let secret = SymmetricKey(data: rsa.publicKey.derRepresentation)
            signature = Array(HMAC<SHA256>.authenticationCode(for: Array(input.utf8), using: secret))
        default: signature = []
        }
        return SecureBytes(copying: Array((input + "." + Base64URL.encode(signature)).utf8))
    }
}

extension SecureBytes {
    /// The token's text, for tests that take it apart.
    var text: String { withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
    convenience init(text: String) { self.init(copying: Array(text.utf8)) }
}

/// The code of the OIDCError `body` throws, or nil when it throws nothing (or something else).
func oidcErrorCode(_ body: () throws -> Void) -> OIDCError.Code? {
    do { try body(); return nil } catch let error as OIDCError { return error.code } catch { return nil }
}

func oidcErrorCode(_ body: () async throws -> Void) async -> OIDCError.Code? {
    do { try await body(); return nil } catch let error as OIDCError { return error.code } catch { return nil }
}

/// A 1024-bit RSA modulus, made fresh: too weak for an id token key.
enum WeakRSAKey {
    static func modulus1024() throws -> String {
        let key = try _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: 1024))
        return Base64URL.encode(try key.publicKey.getKeyPrimitives().modulus)
    }
}
