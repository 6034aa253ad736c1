import BoundedJSON
import Foundation

/// The `/test/…` controls every provider kind answers (see `Tests/Support/standin-common/standin.py`).
extension ProviderServer {
    /// `/test/stats`: token_requests {password, refresh_token, other}, refresh_responses, refresh_tokens, revocations, signups.
    public func stats() async throws -> [String: JSONValue] {
        let (status, body) = try await send("GET", "/test/stats")
        guard status == 200, let object = (try? JSONValue.parse(body))?.objectValue else { throw HarnessError("bad /test/stats answer (\(status))") }
        return object
    }

    /// How many refresh requests the provider has received (answered or failed).
    public func refreshRequests() async throws -> Int {
        Int(try await stats()["token_requests"]?.objectValue?["refresh_token"]?.intValue ?? -1)
    }

    /// How many sign-ins (password grants) the provider has received.
    public func passwordRequests() async throws -> Int {
        Int(try await stats()["token_requests"]?.objectValue?["password"]?.intValue ?? -1)
    }

    /// Refresh answers with this HTTP status.
    public func refreshResponses(_ status: Int) async throws -> Int {
        Int(try await stats()["refresh_responses"]?.objectValue?["\(status)"]?.intValue ?? 0)
    }

    /// Per refresh token id (a hash of the token): how many refresh requests were made with it.
    public func refreshesPerToken() async throws -> [String: Int] {
        try await counts("refresh_tokens")
    }

    /// A `/test/stats` object of counts by key.
    func counts(_ field: String) async throws -> [String: Int] {
        (try await stats()[field]?.objectValue ?? [:]).compactMapValues { $0.intValue.map(Int.init) }
    }

    /// Revocation (oauth2) or logout (supabase) requests received.
    public func revocationRequests() async throws -> Int {
        Int(try await stats()["revocations"]?.intValue ?? -1)
    }

    /// POSTs `body` to a `/test/…` control and requires a 200.
    public func control(_ path: String, _ body: [String: JSONValue] = [:]) async throws {
        let (status, _) = try await post(path, json: body)
        guard status == 200 else { throw HarnessError("\(path) failed with HTTP \(status)") }
    }

    /// Answers the next `count` token requests (sign-in and refresh) with `status`, unprocessed.
    public func fail(count: Int, status: Int = 503) async throws {
        try await control("/test/fail", ["count": .int(Int64(count)), "status": .int(Int64(status))])
    }

    /// Holds every refresh answer `seconds` after its result is committed (0 turns it off).
    public func delay(seconds: Double) async throws {
        try await control("/test/delay", ["seconds": .double(seconds)])
    }

    /// Revokes every refresh token (oauth2: deleted; supabase: every session deleted; firebase: TOKEN_EXPIRED).
    public func revokeAll() async throws { try await control("/test/revoke-all") }

    /// Bans (supabase) or disables (firebase) the user. Not available for oauth2.
    public func disableUser(email: String = ProviderServer.email) async throws {
        try await control("/test/disable-user", ["email": .string(email)])
    }

    public func enableUser(email: String = ProviderServer.email) async throws {
        try await control("/test/enable-user", ["email": .string(email)])
    }

    /// Deletes the user with its sessions (firebase: USER_NOT_FOUND on refresh). Not available for oauth2.
    public func deleteUser(email: String = ProviderServer.email) async throws {
        try await control("/test/delete-user", ["email": .string(email)])
    }
}
