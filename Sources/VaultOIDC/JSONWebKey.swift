import Crypto
import _CryptoExtras

/// One public signing key from a provider's key set (RFC 7517): RSA or EC P-256.
///
/// Keys are made by ``JSONWebKeySet/init(parsing:from:)``; there is no way to make one from a token
/// header (`jwk`, `jku`, `x5u`), because a key named by the token itself proves nothing.
public struct JSONWebKey: Sendable {
    /// The public key material, by type. RSA keys have at least 2048 bits. A P-256 key is kept as
    /// its checked 64-byte `x || y` (swift-crypto 3's P-256 key type is not `Sendable`).
    enum Material: Sendable {
        case rsa(_RSA.Signing.PublicKey)
        case p256(rawRepresentation: [UInt8])
    }

    /// `kid`: which key a token names in its header. Compared as exact bytes.
    public let keyID: String?
    /// `alg`, when the provider restricts the key to one algorithm.
    public let algorithm: String?
    /// `use`: `sig` or absent (encryption keys are skipped when the set is parsed).
    public let use: String?
    let material: Material

    /// The JWS algorithm this key can verify: `RS256` for RSA, `ES256` for P-256.
    public var signingAlgorithm: JWSAlgorithm {
        switch material {
        case .rsa: return .rs256
        case .p256: return .es256
        }
    }

    /// Whether `signature` over `signingInput` verifies with this key under `algorithm`; false when
    /// the algorithm does not fit the key (no algorithm is ever tried against another key type).
    func isValidSignature(_ signature: [UInt8], over signingInput: [UInt8], algorithm: JWSAlgorithm) -> Bool {
        let digest = SHA256.hash(data: signingInput)
        switch (material, algorithm) {
        case (.rsa(let key), .rs256):
            // RFC 7518 §3.3: RSASSA-PKCS1-v1_5; the signature is exactly as long as the modulus.
            guard signature.count * 8 == key.keySizeInBits else { return false }
            return key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: digest, padding: .insecurePKCS1v1_5)
        case (.p256(let raw), .es256):
            // RFC 7518 §3.4: R || S, 32 bytes each, not DER.
            guard signature.count == 64, let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
                  let key = try? P256.Signing.PublicKey(rawRepresentation: raw) else { return false }
            return key.isValidSignature(ecdsa, for: digest)
        default:
            return false
        }
    }
}

/// The signature algorithms an id token may use. Anything else (`none`, `HS256`, `RS384`, `PS256`…)
/// is refused before any key is looked at.
public enum JWSAlgorithm: String, Sendable, CaseIterable {
    /// RSASSA-PKCS1-v1_5 with SHA-256; what every OpenID provider must support.
    case rs256 = "RS256"
    /// ECDSA on P-256 with SHA-256.
    case es256 = "ES256"
}
