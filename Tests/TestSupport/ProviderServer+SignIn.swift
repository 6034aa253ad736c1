import BoundedJSON
import Foundation

/// What an app talks to: each kind's key, endpoints, and its sign-in answer.
extension ProviderServer {
    /// The key an app sends: Supabase's anon key (`apikey` header), Firebase's Web API key (`?key=`); nil for oauth2.
    public var apiKey: String? {
        switch kind {
        case .oauth2: nil
        case .supabase: stateFile("anon-key")
        case .firebase: stateFile("api-key")
        }
    }

    /// The Firebase project id (the id token's `aud`, and `iss` = https://securetoken.google.com/PROJECT).
    public var firebaseProjectID: String? { kind == .firebase ? stateFile("project-id") : nil }

    /// The refresh endpoint an app would be configured with.
    public var tokenEndpoint: URL {
        switch kind {
        case .oauth2: URL(string: base + "/o/token/")!
        case .supabase: URL(string: base + "/auth/v1/token?grant_type=refresh_token")!
        case .firebase: URL(string: base + "/securetoken.googleapis.com/v1/token?key=\(apiKey ?? "")")!
        }
    }

    /// Firebase's identitytoolkit base through the emulator scheme (`…/identitytoolkit.googleapis.com/v1`).
    public var identityToolkitBase: String { base + "/identitytoolkit.googleapis.com/v1" }

    /// Signs the user in as an app would: the exact token-response bytes the provider answered.
    /// oauth2: the password grant for the user named by the part before `@` (`ada`) as client `sorted-app`;
    /// supabase: `POST /auth/v1/token?grant_type=password`; firebase: `accounts:signInWithPassword` (camelCase).
    public func signIn(email: String = ProviderServer.email, password: String = ProviderServer.password) async throws -> [UInt8] {
        let (status, body): (Int, [UInt8])
        switch kind {
        case .oauth2:
            let basic = Data("sorted-app:sorted-app-secret".utf8).base64EncodedString()
            (status, body) = try await post("/o/token/", form: [
                "grant_type": "password", "username": String(email.split(separator: "@").first ?? ""),
                "password": password, "scope": "read write",
            ], headers: ["Authorization": "Basic \(basic)"])
        case .supabase:
            (status, body) = try await post("/auth/v1/token?grant_type=password",
                                            json: ["email": .string(email), "password": .string(password)],
                                            headers: ["apikey": apiKey ?? ""])
        case .firebase:
            (status, body) = try await post("/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword?key=\(apiKey ?? "")",
                                            json: ["email": .string(email), "password": .string(password), "returnSecureToken": .bool(true)])
        }
        guard status == 200 else { throw HarnessError("\(kind) sign-in failed with HTTP \(status): \(String(decoding: body, as: UTF8.self))") }
        return body
    }

    /// Creates a user (supabase `/auth/v1/signup`, firebase `accounts:signUp`): the answer bytes (a session).
    public func signUp(email: String, password: String) async throws -> [UInt8] {
        let (status, body): (Int, [UInt8])
        switch kind {
        case .oauth2:
            throw HarnessError("the oauth2 provider has no sign-up")
        case .supabase:
            (status, body) = try await post("/auth/v1/signup", json: ["email": .string(email), "password": .string(password)],
                                            headers: ["apikey": apiKey ?? ""])
        case .firebase:
            (status, body) = try await post("/identitytoolkit.googleapis.com/v1/accounts:signUp?key=\(apiKey ?? "")",
                                            json: ["email": .string(email), "password": .string(password), "returnSecureToken": .bool(true)])
        }
        guard status == 200 else { throw HarnessError("\(kind) sign-up failed with HTTP \(status): \(String(decoding: body, as: UTF8.self))") }
        return body
    }

    /// Tries a refresh token directly, as the kind's protocol wants it (supabase: JSON + apikey;
    /// firebase: form; oauth2: form + Basic): the HTTP status and the answer bytes.
    public func refreshDirectly(_ refreshToken: String) async throws -> (Int, [UInt8]) {
        switch kind {
        case .oauth2:
            let basic = Data("sorted-app:sorted-app-secret".utf8).base64EncodedString()
            return try await post("/o/token/", form: ["grant_type": "refresh_token", "refresh_token": refreshToken],
                                  headers: ["Authorization": "Basic \(basic)"])
        case .supabase:
            return try await post("/auth/v1/token?grant_type=refresh_token", json: ["refresh_token": .string(refreshToken)],
                                  headers: ["apikey": apiKey ?? ""])
        case .firebase:
            return try await post("/securetoken.googleapis.com/v1/token?key=\(apiKey ?? "")",
                                  form: ["grant_type": "refresh_token", "refresh_token": refreshToken])
        }
    }
}
