@_spi(Fuzzing) import VaultSession
import FuzzSupport
import VaultCrypto

/// A token endpoint's answer, as each provider kind reads it (oauth2 and oidc: RFC 6749 §5.1 and
/// §5.2; firebase: securetoken's fields and error object; supabase: GoTrue's session and error
/// codes), and a revocation endpoint's (RFC 7009). The selector byte's low two bits choose the
/// kind; its high bit chooses between the bare body parser and the whole answer with a status.
///
/// Contract: no crash; an accepted answer has a non-empty printable access token within the limit
/// and sane lifetimes; no text the outcome would show or log holds a credential the request carried
/// (the provider may echo its input) or a byte that is not printable ASCII.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTokenResponse(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let (selector, body) = split(data, size)
    let kinds: [ProviderKind] = [.oauth2, .oidc, .firebase, .supabase]
    let kind = kinds[Int(selector & 3)]
    if selector & 0x80 == 0 {
        if let response = try? TokenResponse(json: body, kind: kind) { check(response) }
        return 0
    }
    let statuses = [200, 400, 401, 403, 404, 429, 500, 302]
    let status = statuses[Int(selector >> 2) & 7]
    let secure = SecureBytes(copying: body)
    let (tokens, texts) = ProviderAnswerFuzzing.refreshAnswer(status: status, body: secure, kind: kind, sent: sent)
    if let tokens { check(tokens) }
    let revocationTexts = selector & 0x40 == 0 ? [] : ProviderAnswerFuzzing.revocationAnswer(status: status, body: secure, sent: sent)
    for text in texts + revocationTexts {
        require(text.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F }, "an outcome's text holds a byte that is not printable ASCII")
        for secret in sentText {
            require(!text.utf8.elementsEqual(secret.utf8) && !text.contains(secret), "an outcome's text holds a credential the request carried")
        }
    }
    return 0
}

/// What the request carried: a refresh token and a client secret (the seeds echo them back).
let sentText = ["1//0gRefreshTokenSecret-4xZ", "GOCSPX-clientSecretValue9"]
let sent = sentText.map { SecureBytes(copying: Array($0.utf8)) }

private func check(_ response: TokenResponse) {
    require(response.accessToken.count > 0, "an empty access token was accepted")
    require(response.accessToken.count <= TokenResponse.maximumTokenBytes, "an access token over the limit was accepted")
    response.accessToken.withUnsafeBytes { raw in
        require(raw.allSatisfy { $0 >= 0x20 && $0 < 0x7F }, "an access token with a control or non-ASCII byte was accepted")
    }
    if let refresh = response.refreshToken {
        require(refresh.count <= TokenResponse.maximumTokenBytes, "a refresh token over the limit was accepted")
    }
    for lifetime in [response.expiresIn, response.refreshTokenExpiresIn] {
        if let lifetime { require(lifetime.isFinite && lifetime >= 0, "a negative or infinite lifetime was accepted") }
    }
}
