import Foundation
import FuzzSupport
import VaultCrypto
import VaultOIDC

/// What an OpenID provider sends: its key set (JWKS), its discovery document, and the id token
/// (a compact JWS) checked against a key set. Contract: no crash, limits kept, and a token is never
/// accepted unless the verifier's key signed it — the fuzzer does not hold that key, so every token
/// it makes must be refused.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOIDC(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let (selector, body) = split(data, size)
    switch selector % 3 {
    case 0:
        guard let keys = try? JSONWebKeySet(parsing: body, from: jwksURL) else { return 0 }
        require(keys.keys.count <= JSONWebKeySet.maximumKeys, "a key set over the key limit was accepted")
        // A key set of the fuzzer's may hold the key of a seed token; only check that nothing crashes.
        _ = try? verifier.verify(SecureBytes(copying: Array(seedToken.utf8)), keys: keys, now: now)
    case 1:
        guard let document = try? OIDCDiscoveryDocument(parsing: body, expectedIssuer: issuer) else { return 0 }
        require(document.issuer == issuer, "a discovery document for another issuer was accepted")
        for endpoint in [document.tokenEndpoint, document.jwksURI] + (document.revocationEndpoint.map { [$0] } ?? []) {
            require(isHTTPSOrLoopback(endpoint), "an endpoint neither https nor plain http to loopback was accepted: \(endpoint)")
        }
    default:
        let token = SecureBytes(copying: body)
        do {
            _ = try verifier.verify(token, keys: try! JSONWebKeySet(parsing: fixedKeys, from: jwksURL), now: now)
            fatalError("fuzz contract broken: a token the fuzzer made verified against a key it does not hold")
        } catch {}
    }
    return 0
}

let issuer = URL(string: "https://issuer.example")!
let jwksURL = URL(string: "https://issuer.example/jwks")!
let verifier = IDTokenVerifier(issuer: issuer, clientID: "fuzz-client")
/// Inside the seed tokens' validity, so a token that got past the signature would pass the claims too.
let now = Date(timeIntervalSince1970: 1_700_001_000)
/// An EC P-256 and an RSA-2048 public key whose private halves were thrown away when they were made.
/// Parsed for each input, not kept parsed: a `JSONWebKey` holds its key in an enum whose case is
/// packed into the pointer's spare bits, which LeakSanitizer does not take for a pointer, so a
/// key set held in a global is reported as leaked at exit.
let fixedKeys = Array(#"{"keys": [{"kty": "EC", "crv": "P-256", "kid": "fuzz-ec", "use": "sig", "alg": "ES256", "x": "dmugWrSyMR5l8INy80pBqJ_KI4lZbqQgHbTAMT7QxJE", "y": "sgDy9dUbmSakTFzgVbesGOzq0C5F0YXI5nAZ1ZrNGnE"}, {"kty": "RSA", "kid": "fuzz-rsa", "use": "sig", "alg": "RS256", "n": "19uiBIIBdB0C4PY-O9h-RsrSV934fNCbkyHZHTxAlc4nbzCuGiAcGhr-c3RJuTQwwqeEVk2YEvEC6bSBWhGqMKiGdEzzs9ojd9e7Qyf-kKnEYraCJzG1iKA8r1zDRznzJYTlYeANWFyOU5apSDeb9e0SKw8NCKaIURVCpCoZGhu9QX8PwKdBf8FmVXauXkqotEWrFwba3nns0er3LXoagrIJivzuTCB5GoTnWAwV80tassmt-oV5U1yLC1K4y9C1MgH7g8kRMB05T3E4_oWWCCuREngrZ6pShcx2TgMfe4lt1p_SkmQKlWzBuEarONVYcXnE4cZgnlYajvw1Ic9HZw", "e": "AQAB"}]}"#.utf8)
let seedToken = #"eyJhbGciOiAiRVMyNTYiLCAia2lkIjogImZ1enotZWMiLCAidHlwIjogIkpXVCJ9.eyJpc3MiOiAiaHR0cHM6Ly9pc3N1ZXIuZXhhbXBsZSIsICJhdWQiOiAiZnV6ei1jbGllbnQiLCAic3ViIjogInVzZXItMSIsICJpYXQiOiAxNzAwMDAwMDAwLCAiZXhwIjogMTcwMDAwMzYwMH0.gvHG-CqppDdtqpYt2IiNcQmgdgELpeJP5213kg0ILqzwouV1zUtCsVFQX4YQ3yPngEH2vZv6u10TFRs0PQ_D3A"#

/// The rule as `URL` reads the URL (`URL.scheme`, `URL.host`), written apart from
/// `SecureEndpoint`, which reads it through `URLComponents`: a disagreement is a finding.
private func isHTTPSOrLoopback(_ url: URL) -> Bool {
    guard let scheme = url.scheme?.lowercased() else { return false }
    if scheme == "https" { return true }
    guard scheme == "http", let host = url.host?.lowercased() else { return false }
    let octets = host.split(separator: ".", omittingEmptySubsequences: false)
    return ["localhost", "::1", "[::1]"].contains(host) || (octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil })
}
