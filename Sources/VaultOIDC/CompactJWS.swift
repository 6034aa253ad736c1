import BoundedJSON
import VaultCrypto

/// A JWS in compact serialization (RFC 7515 §7.1), split and decoded, signature not yet checked.
///
/// Parsing is bounded (``IDTokenVerifier/maximumTokenBytes``) and strict: exactly three parts,
/// strict base64url, a JSON object header with a string `alg`, no `crit` (no extension is
/// understood, so none may be required). `jwk`, `jku`, `x5u` and `x5c` in the header are ignored:
/// keys come only from the provider's key set.
struct CompactJWS {
    let algorithmName: String
    let keyID: String?
    /// `BASE64URL(header) . BASE64URL(payload)`, the bytes the signature covers.
    private(set) var signingInput: [UInt8]
    private(set) var payload: [UInt8]
    private(set) var signature: [UInt8]

    init(_ token: SecureBytes) throws(OIDCError) {
        guard token.count <= IDTokenVerifier.maximumTokenBytes else {
            throw .malformedToken("it is longer than \(IDTokenVerifier.maximumTokenBytes) bytes")
        }
        var parts = token.withUnsafeBytes { raw in raw.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).map { Array($0) } }
        defer { for index in parts.indices { parts[index].withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } } }
        guard parts.count == 3 else {
            throw .malformedToken(parts.count == 5 ? "it is encrypted (JWE), which is not supported" : "it is not a compact JWS (three base64url parts)")
        }
        guard let header = Base64URL.decode(parts[0]), let payload = Base64URL.decode(parts[1]), let signature = Base64URL.decode(parts[2]) else {
            throw .malformedToken("a part is not strict base64url")
        }
        guard let members = (try? JSONValue.parse(header, maxDepth: 4))?.objectValue,
              let algorithmName = members["alg"]?.stringValue else {
            throw .malformedToken("its header is not a JSON object with an `alg`")
        }
        guard members["crit"] == nil else { throw .malformedToken("its header requires extensions (`crit`) that are not supported") }
        if let kid = members["kid"], kid.stringValue == nil { throw .malformedToken("its header `kid` is not a string") }
        self.algorithmName = algorithmName
        self.keyID = members["kid"]?.stringValue
        self.signingInput = parts[0] + [UInt8(ascii: ".")] + parts[1]
        self.payload = payload
        self.signature = signature
    }

    /// Overwrites the decoded copies of the token; call when done (the token is a bearer secret).
    mutating func wipe() {
        signingInput.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) }
        payload.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) }
        signature.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) }
    }
}
