import BoundedJSON
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// What a refresh request (RFC 6749 §6) came to.
enum RefreshAnswer: Sendable {
    case tokens(TokenResponse)
    /// `invalid_grant`: the refresh token is dead (revoked, expired, reused or rotated elsewhere).
    case invalidGrant
    /// No answer (the request never left), a 5xx, 429 or 408: try again later; delete nothing.
    case transient(String)
    /// No answer, and the request may have reached the provider (deadline passed, connection
    /// broken after sending): the refresh token may have rotated with the answer. Delete nothing.
    case lost(String)
    /// Any other error the provider named (`invalid_client`, `unauthorized_client`, …): the
    /// configuration is wrong, signing in again would not help; delete nothing.
    case rejected(error: String, description: String?)
}

/// What a revocation request (RFC 7009) came to.
enum RevocationAnswer: Sendable {
    case revoked
    case transient(String)
    case rejected(String)
}

/// Builds the token and revocation requests and reads their answers.
struct OAuthClient: Sendable {
    let transport: any OAuthTransport

    func refresh(_ session: LoginSession, refreshToken: SecureBytes) async -> RefreshAnswer {
        switch session.provider.kind {
        case .firebase: return await refreshFirebase(session, refreshToken: refreshToken)
        case .supabase: return await refreshSupabase(session, refreshToken: refreshToken)
        case .oauth2, .oidc: break
        }
        var form = FormBody()
        form.add("grant_type", "refresh_token")
        form.add("refresh_token", secret: refreshToken)
        let text = ProviderErrorText(sent: [refreshToken] + [session.provider.clientSecret].compactMap { $0 })
        return await post(authenticated(form, to: session.provider.tokenEndpoint, provider: session.provider)) {
            Self.refreshAnswer($0, text: text)
        }
    }

    /// How an RFC 6749 §5.1/§5.2 token answer maps to an outcome; `text` cleans the provider's words.
    static func refreshAnswer(_ response: OAuthHTTPResponse, text: ProviderErrorText) -> RefreshAnswer {
        switch response.status {
        case 200:
            let parsed = response.body.withUnsafeBytes { raw in Result { try TokenResponse(json: raw) } }
            switch parsed {
            case .success(let tokens): return .tokens(tokens)
            case .failure(let error):
                return .rejected(error: "invalid_response", description: (error as? VaultError)?.reason ?? "unreadable token response")
            }
        case 408, 429, 500...599:
            return .transient("the provider answered HTTP \(response.status)")
        default:
            let error = Self.errorCode(response.body, text: text)
            if error?.code == "invalid_grant" { return .invalidGrant }
            return .rejected(error: error?.code ?? "http_\(response.status)", description: error?.description)
        }
    }

    func revoke(_ token: SecureBytes, hint: String, provider: OAuthProvider, at endpoint: URL) async -> RevocationAnswer {
        var form = FormBody()
        form.add("token", secret: token)
        form.add("token_type_hint", hint)
        let text = ProviderErrorText(sent: [token] + [provider.clientSecret].compactMap { $0 })
        return await post(authenticated(form, to: endpoint, provider: provider)) { Self.revocationAnswer($0, text: text) }
    }

    /// How an RFC 7009 revocation answer maps to an outcome; `text` cleans the provider's words.
    static func revocationAnswer(_ response: OAuthHTTPResponse, text: ProviderErrorText) -> RevocationAnswer {
        switch response.status {
        case 200: return .revoked
        case 408, 429, 500...599: return .transient("the provider answered HTTP \(response.status)")
        default:
            let error = Self.errorCode(response.body, text: text)
            // RFC 7009 §2.2.1: the server does not revoke this kind of token; nothing more to do.
            if error?.code == "unsupported_token_type" { return .revoked }
            return .rejected(error?.code ?? "http_\(response.status)")
        }
    }

    /// Adds client authentication (RFC 6749 §2.3.1) and seals the form.
    func authenticated(_ form: FormBody, to url: URL, provider: OAuthProvider) -> OAuthHTTPRequest {
        var form = form
        var authorization: SecureBytes?
        switch (provider.clientAuthentication, provider.clientSecret) {
        case (.basic, let secret?):
            authorization = FormBody.basicAuthorization(clientID: provider.clientID, secret: secret)
        case (.post, let secret?):
            form.add("client_id", provider.clientID)
            form.add("client_secret", secret: secret)
        case (_, nil):
            form.add("client_id", provider.clientID)
        }
        return OAuthHTTPRequest(url: url, body: form.finish(), authorization: authorization)
    }

    /// The `error` and `error_description` of an error answer (RFC 6749 §5.2), bounded and cleaned
    /// by `text` (a code that echoes a credential is the withheld notice, never the credential).
    static func errorCode(_ body: SecureBytes, text: ProviderErrorText) -> (code: String, description: String?)? {
        guard let object = ProviderErrorText.object(body), let code = text.clean(object["error"]?.stringValue, max: 128) else { return nil }
        return (code, text.clean(object["error_description"]?.stringValue))
    }
}

/// An `application/x-www-form-urlencoded` body built in secure memory, for bodies that carry tokens.
struct FormBody {
    private var parts: [SecureBytes] = []

    mutating func add(_ name: String, _ value: String) {
        add(name, secret: SecureBytes(copying: Array(value.utf8)))
    }

    mutating func add(_ name: String, secret value: SecureBytes) {
        let prefix = (parts.isEmpty ? "" : "&") + Self.encode(Array(name.utf8)) + "="
        parts.append(SecureBytes(copying: Array(prefix.utf8)))
        parts.append(value.withUnsafeBytes { Self.encodeSecure($0) })
    }

    func finish() -> SecureBytes {
        let total = parts.reduce(0) { $0 + $1.count }
        return SecureBytes(count: total) { out in
            var offset = 0
            for part in parts {
                part.withUnsafeBytes { raw in
                    if raw.count > 0 { (out.baseAddress! + offset).copyMemory(from: raw.baseAddress!, byteCount: raw.count) }
                    offset += raw.count
                }
            }
        }
    }

    /// `Basic base64(form(id) ":" form(secret))`, as RFC 6749 §2.3.1 spells it.
    static func basicAuthorization(clientID: String, secret: SecureBytes) -> SecureBytes {
        let id = SecureBytes(copying: Array(encode(Array(clientID.utf8)).utf8))
        let encodedSecret = secret.withUnsafeBytes { encodeSecure($0) }
        let joined = SecureBytes(count: id.count + 1 + encodedSecret.count) { out in
            id.withUnsafeBytes { out.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            out[id.count] = UInt8(ascii: ":")
            encodedSecret.withUnsafeBytes { raw in
                if raw.count > 0 { (out.baseAddress! + id.count + 1).copyMemory(from: raw.baseAddress!, byteCount: raw.count) }
            }
        }
        let base64 = joined.base64EncodedString()
        return SecureBytes(copying: Array(("Basic " + base64).utf8))
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "*"):
            return true
        default:
            return false
        }
    }

    private static let hex = Array("0123456789ABCDEF".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBytes { encodeSecure($0) }.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// Percent-encodes into secure memory; spaces become `+`.
    static func encodeSecure(_ raw: UnsafeRawBufferPointer) -> SecureBytes {
        let length = raw.reduce(0) { $0 + (isUnreserved($1) || $1 == 0x20 ? 1 : 3) }
        return SecureBytes(count: length) { out in
            var offset = 0
            for byte in raw {
                if isUnreserved(byte) {
                    out[offset] = byte; offset += 1
                } else if byte == 0x20 {
                    out[offset] = UInt8(ascii: "+"); offset += 1
                } else {
                    out[offset] = UInt8(ascii: "%")
                    out[offset + 1] = hex[Int(byte >> 4)]
                    out[offset + 2] = hex[Int(byte & 0x0F)]
                    offset += 3
                }
            }
        }
    }
}
