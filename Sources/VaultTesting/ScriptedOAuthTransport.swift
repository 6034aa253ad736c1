import BoundedJSON
import FoundationEssentials
import Synchronization
import VaultCrypto
import VaultSession

/// An `OAuthTransport` for unit tests of session logic: it answers from a script (or a closure),
/// records every request, and can hold requests in flight until the test releases them.
///
/// ```swift
/// let transport = ScriptedOAuthTransport([.tokens(access: "A2", refresh: "R2"), .unreachable])
/// transport.hold()                        // requests now wait…
/// async let result = sessions.autoLogin(key)
/// await transport.waitForRequests(1)      // …the refresh is in flight
/// transport.release()
/// ```
///
/// Records keep decoded form fields, tokens included, in ordinary memory: never use it outside tests.
public final class ScriptedOAuthTransport: OAuthTransport {
    /// One scripted answer.
    public enum Reply: Sendable {
        /// An HTTP answer with this status and body.
        case answer(status: Int, body: String)
        /// No HTTP answer at all: the transport throws ``OAuthTransportError`` ("provider down"),
        /// and the request never left.
        case unreachable
        /// The request was sent and its answer lost (the deadline passed, the connection broke):
        /// the provider may have acted on it.
        case lostAfterSending

        /// A 200 token response (RFC 6749 §5.1).
        public static func tokens(access: String, refresh: String? = nil, expiresIn: Int? = 3600,
                                  tokenType: String = "Bearer") -> Reply {
            var fields = ["\"access_token\":\"\(access)\"", "\"token_type\":\"\(tokenType)\""]
            if let expiresIn { fields.append("\"expires_in\":\(expiresIn)") }
            if let refresh { fields.append("\"refresh_token\":\"\(refresh)\"") }
            return .answer(status: 200, body: "{" + fields.joined(separator: ",") + "}")
        }

        /// An error answer (RFC 6749 §5.2), 400 unless told otherwise.
        public static func oauthError(_ code: String, status: Int = 400) -> Reply {
            .answer(status: status, body: "{\"error\":\"\(code)\"}")
        }

        /// An empty 200, as a revocation endpoint answers (RFC 7009 §2.2).
        public static let ok = Reply.answer(status: 200, body: "")
    }

    /// What one request carried, decoded.
    public struct Request: Sendable {
        /// The request's URL without its secret query parameters (what may appear in text).
        public let url: URL
        /// The URL as sent, secret query parameters included.
        public let sentURL: URL
        public let bodyFormat: OAuthHTTPRequest.BodyFormat
        /// The body as text.
        public let body: String
        /// The form fields in order, percent-decoded (empty for a JSON body).
        public let fields: [(name: String, value: String)]
        /// The `Authorization` header value, if any.
        public let authorization: String?
        /// The secret headers, by name.
        public let headers: [String: String]

        /// The first value of a form field.
        public subscript(field: String) -> String? { fields.first { $0.name == field }?.value }

        /// The first value of a query parameter of the sent URL, percent-decoded.
        public func query(_ name: String) -> String? {
            URLComponents(url: sentURL, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == name }?.value
        }

        /// A string member of a JSON body.
        public func json(_ member: String) -> String? {
            guard bodyFormat == .json, case .object(let object)? = try? JSONValue.parse(Array(body.utf8), maxDepth: 8) else { return nil }
            return object[member]?.stringValue
        }

        public var usedBasicAuth: Bool { authorization?.hasPrefix("Basic ") ?? false }

        /// The client id and secret of a Basic header, base64- and form-decoded.
        public var basicCredentials: (id: String, secret: String)? {
            guard let authorization, authorization.hasPrefix("Basic "),
                  let data = Data(base64Encoded: String(authorization.dropFirst(6))),
                  let joined = String(data: data, encoding: .utf8),
                  let colon = joined.firstIndex(of: ":") else { return nil }
            return (ScriptedOAuthTransport.formDecode(joined[..<colon]),
                    ScriptedOAuthTransport.formDecode(joined[joined.index(after: colon)...]))
        }
    }

    public typealias Handler = @Sendable (Request) async throws -> Reply

    private struct State {
        var script: [Reply]
        var handler: Handler?
        var requests: [Request] = []
        var holding = false
        var held: [CheckedContinuation<Void, Never>] = []
        var arrivalWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state: Locked<State>
    public let requestDeadline: TimeInterval

    /// Answers requests with `script`, in order; a request past its end throws ``OAuthTransportError``.
    /// `requestDeadline` is only reported (a scripted request takes no time unless held).
    public init(_ script: [Reply] = [], requestDeadline: TimeInterval = 10) {
        state = Locked(State(script: script))
        self.requestDeadline = requestDeadline
    }

    /// Answers every request with `handler`, which may also change the world (the store) first.
    public init(requestDeadline: TimeInterval = 10, handler: @escaping Handler) {
        state = Locked(State(script: [], handler: handler))
        self.requestDeadline = requestDeadline
    }

    /// Appends answers to the script.
    public func enqueue(_ replies: Reply...) {
        state.withLock { $0.script.append(contentsOf: replies) }
    }

    /// Every request so far, in arrival order.
    public var requests: [Request] { state.withLock { $0.requests } }

    public var requestCount: Int { state.withLock { $0.requests.count } }

    /// Makes later requests wait, once recorded, until ``release()``.
    public func hold() {
        state.withLock { $0.holding = true }
    }

    /// Lets every held request go on, and stops holding new ones.
    public func release() {
        let held = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.holding = false
            defer { state.held = [] }
            return state.held
        }
        for continuation in held { continuation.resume() }
    }

    /// Returns once at least `count` requests have arrived (held or not).
    public func waitForRequests(_ count: Int) async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                if state.requests.count >= count { return true }
                state.arrivalWaiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    public func post(_ request: OAuthHTTPRequest) async throws -> OAuthHTTPResponse {
        let body = request.body.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        let recorded = Request(
            url: request.url, sentURL: request.sendURL(), bodyFormat: request.bodyFormat, body: body,
            fields: request.bodyFormat == .form ? Self.formFields(body) : [],
            authorization: request.authorization.map { $0.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } },
            headers: Dictionary(request.secretHeaders.map { ($0.name, $0.value.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }) },
                                uniquingKeysWith: { first, _ in first }))
        let arrived = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.requests.append(recorded)
            let count = state.requests.count
            let ready = state.arrivalWaiters.filter { $0.count <= count }.map(\.continuation)
            state.arrivalWaiters.removeAll { $0.count <= count }
            return ready
        }
        for continuation in arrived { continuation.resume() }

        await withCheckedContinuation { continuation in
            let wait = state.withLock { state -> Bool in
                guard state.holding else { return false }
                state.held.append(continuation)
                return true
            }
            if !wait { continuation.resume() }
        }

        // The answer is chosen on release, so a test may change the script while a request is held.
        let (handler, scripted) = state.withLock { state -> (Handler?, Reply?) in
            if let handler = state.handler { return (handler, nil) }
            return (nil, state.script.isEmpty ? nil : state.script.removeFirst())
        }
        let reply: Reply
        if let handler {
            reply = try await handler(recorded)
        } else if let scripted {
            reply = scripted
        } else {
            throw OAuthTransportError("ScriptedOAuthTransport: no scripted answer left for request \(requestCount)",
                                      requestMayHaveArrived: false)
        }
        switch reply {
        case .answer(let status, let body):
            return OAuthHTTPResponse(status: status, body: SecureBytes(copying: Array(body.utf8)))
        case .unreachable:
            throw OAuthTransportError("scripted: the provider is unreachable", requestMayHaveArrived: false)
        case .lostAfterSending:
            throw OAuthTransportError("scripted: the provider did not answer in time")
        }
    }

    static func formFields(_ body: String) -> [(name: String, value: String)] {
        body.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (formDecode(parts[0]), parts.count > 1 ? formDecode(parts[1]) : "")
        }
    }

    /// `+` is a space, `%XX` a byte.
    static func formDecode(_ text: Substring) -> String {
        String(text).replacing("+", with: " ").percentDecoded ?? String(text)
    }
}
