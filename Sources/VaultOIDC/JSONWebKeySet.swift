import BoundedJSON
import Crypto
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import _CryptoExtras

/// A provider's public signing keys: the document at the discovery document's `jwks_uri` (RFC 7517 §5).
///
/// ```swift
/// let keys = try JSONWebKeySet(parsing: body, from: discovery.jwksURI)
/// ```
///
/// RSA keys (`n`, `e`, at least 2048 bits) and EC P-256 keys (`x`, `y`) are kept; other key types
/// and curves (`oct`, `OKP`, P-384…) and encryption keys (`use: enc`) are skipped, so a provider that
/// also publishes those still works. A broken RSA or P-256 key makes the whole set malformed rather
/// than silently vanishing, so the error points at the provider.
public struct JSONWebKeySet: Sendable {
    /// The largest key set accepted, in bytes.
    public static let maximumBytes = 64 * 1024
    /// The most keys kept; providers publish a handful.
    public static let maximumKeys = 64

    public let keys: [JSONWebKey]

    /// Parses a key set fetched from `url` (the URL only names the document in errors).
    public init(parsing body: some Collection<UInt8>, from url: URL) throws(OIDCError) {
        guard body.count <= Self.maximumBytes else { throw .documentTooLarge(url, limit: Self.maximumBytes) }
        guard let document = try? JSONValue.parse(body, maxDepth: 8), let entries = document["keys"]?.arrayValue else {
            throw .malformedDocument(url, "it is not a JSON object with a `keys` array")
        }
        var keys: [JSONWebKey] = []
        for entry in entries {
            guard let members = entry.objectValue else { throw .malformedDocument(url, "an entry of `keys` is not an object") }
            guard let key = try Self.key(members, url: url) else { continue }
            guard keys.count < Self.maximumKeys else { throw .malformedDocument(url, "it has more than \(Self.maximumKeys) signing keys") }
            keys.append(key)
        }
        self.keys = keys
    }

    /// The key for a token whose header names `keyID`; without a key id, the only key of the set.
    public func key(for keyID: String?) -> JSONWebKey? {
        candidates(for: keyID).first
    }

    /// Every key with that id (a provider may publish an RSA and an EC key under one id); without a
    /// key id, the only key of the set.
    func candidates(for keyID: String?) -> [JSONWebKey] {
        guard let keyID else { return keys.count == 1 ? keys : [] }
        return keys.filter { $0.keyID.map { Array($0.utf8) == Array(keyID.utf8) } ?? false }
    }

    /// One key, or nil for a key this verifier does not use.
    private static func key(_ members: [String: JSONValue], url: URL) throws(OIDCError) -> JSONWebKey? {
        let use = members["use"]?.stringValue
        guard use == nil || use == "sig" else { return nil }
        let keyID = members["kid"]?.stringValue
        let algorithm = members["alg"]?.stringValue
        let name = keyID.map { "key \($0.debugDescription)" } ?? "a key without kid"
        func bytes(_ member: String) throws(OIDCError) -> [UInt8] {
            guard let text = members[member]?.stringValue, let value = Base64URL.decode(text.utf8), !value.isEmpty else {
                throw .malformedDocument(url, "\(name) has no valid base64url `\(member)`")
            }
            return value
        }
        let material: JSONWebKey.Material
        switch members["kty"]?.stringValue {
        case "RSA":
            guard algorithm == nil || algorithm == JWSAlgorithm.rs256.rawValue else { return nil }
            let (n, e) = (try bytes("n"), try bytes("e"))
            guard n.count <= 1024, e.count <= 8, let key = try? _RSA.Signing.PublicKey(n: n, e: e) else {
                throw .malformedDocument(url, "\(name) is not a valid RSA public key")
            }
            guard key.keySizeInBits >= 2048 else {
                throw .malformedDocument(url, "\(name) is an RSA key of \(key.keySizeInBits) bits; at least 2048 are required")
            }
            material = .rsa(key)
        case "EC":
            guard members["crv"]?.stringValue == "P-256" else { return nil }
            guard algorithm == nil || algorithm == JWSAlgorithm.es256.rawValue else { return nil }
            let (x, y) = (try bytes("x"), try bytes("y"))
            // The initializer checks that the point is on the curve.
            guard x.count == 32, y.count == 32, (try? P256.Signing.PublicKey(rawRepresentation: x + y)) != nil else {
                throw .malformedDocument(url, "\(name) is not a valid P-256 public key")
            }
            material = .p256(rawRepresentation: x + y)
        default:
            return nil
        }
        return JSONWebKey(keyID: keyID, algorithm: algorithm, use: use, material: material)
    }
}
