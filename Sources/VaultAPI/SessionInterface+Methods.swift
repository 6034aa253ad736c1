import BoundedJSON
import VaultCrypto

extension SessionInterface {
    /// The `service` and `account` of a login call.
    public typealias LoginName = VaultInterface.ItemName

    /// `Save(service, account, tokenResponse, provider, maxLifetimeSeconds?) -> (session)`.
    ///
    /// `tokenResponse` is the provider's own JSON answer, passed as an object: its tokens are the
    /// JSON strings the provider sent (not base64), read straight into secure memory on both sides
    /// (``tokenMembers``); `provider`'s clientSecret and apiKey are base64 secrets.
    public enum Save: VarlinkMethod {
        public static let name = SessionInterface.name + ".Save"

        /// The members of a token response that hold tokens, under every provider kind's names
        /// (TokenResponse.tokenMembers in VaultSession: a test keeps the two lists equal).
        public static let tokenMembers = ["access_token", "refresh_token", "id_token", "idToken", "refreshToken"]

        public static var requestSecrets: SecretLimits {
            var text: [String: Int] = [:]
            for member in tokenMembers {
                text["tokenResponse." + member] = member.lowercased().hasPrefix("id") ? WireLimits.tokenBytes : WireLimits.responseTokenBytes
            }
            return SecretLimits(["provider.clientSecret": WireLimits.providerSecretBytes, "provider.apiKey": WireLimits.providerSecretBytes],
                                text: text)
        }

        public struct Request: WireCodable, Equatable {
            public var service: String
            public var account: String
            /// The token response's members but its tokens.
            public var tokenResponse: [String: JSONValue]
            /// The token response's tokens (``tokenMembers`` that are strings), by member name.
            public var tokens: [String: SecureBytes]
            public var provider: Provider
            public var maxLifetimeSeconds: Int64?

            public init(service: String, account: String, tokenResponse: [String: JSONValue], tokens: [String: SecureBytes],
                        provider: Provider, maxLifetimeSeconds: Int64? = nil) {
                self.service = service
                self.account = account
                self.tokenResponse = tokenResponse
                self.tokens = tokens
                self.provider = provider
                self.maxLifetimeSeconds = maxLifetimeSeconds
            }

            /// A request from a token response an app holds as `JSONValue`s: its token strings are
            /// copied into secure memory here (the app's own copies are the app's to drop).
            public init(service: String, account: String, tokenResponse: [String: JSONValue], provider: Provider,
                        maxLifetimeSeconds: Int64? = nil) {
                var rest = tokenResponse
                var tokens: [String: SecureBytes] = [:]
                for member in Save.tokenMembers {
                    if case .string(let text)? = rest[member] {
                        tokens[member] = SecureBytes(copying: text.utf8)
                        rest[member] = nil
                    }
                }
                self.init(service: service, account: account, tokenResponse: rest, tokens: tokens, provider: provider,
                          maxLifetimeSeconds: maxLifetimeSeconds)
            }

            /// A request from the JSON text of a token response (what `sortedvault session save`
            /// reads): its tokens go from the text into secure memory without a `String`. Throws
            /// ``WireParameterError`` naming `tokenResponse` or a token member when the text is not a
            /// JSON object or a token is not a valid string.
            public init(service: String, account: String, tokenResponseJSON raw: UnsafeRawBufferPointer, provider: Provider,
                        maxLifetimeSeconds: Int64? = nil) throws(WireParameterError) {
                let limits = Save.requestSecrets
                var fields: [String: SecretField] = [:]
                let value: JSONValue
                do {
                    value = try JSONValue.parse(raw, maxDepth: 8, diverting: Save.divertedTokenMembers) { member, text in
                        fields[member] = limits.decode("tokenResponse." + member, text)
                    }
                } catch {
                    throw WireParameterError("tokenResponse", "is not valid JSON (\(error.reason.rawValue)); pass the provider's answer unchanged")
                }
                guard let object = value.objectValue else { throw WireParameterError("tokenResponse", "must be a JSON object") }
                var tokens: [String: SecureBytes] = [:]
                for (member, field) in fields.sorted(by: { $0.key < $1.key }) {
                    switch field {
                    case .bytes(let bytes): tokens[member] = bytes
                    case .invalid(let rule): throw WireParameterError("tokenResponse." + member, rule)
                    }
                }
                self.init(service: service, account: account, tokenResponse: object, tokens: tokens, provider: provider,
                          maxLifetimeSeconds: maxLifetimeSeconds)
            }

            public init(from p: WireParameters) throws(WireParameterError) {
                service = try p.string("service")
                account = try p.string("account")
                tokenResponse = try p.object("tokenResponse")
                var tokens: [String: SecureBytes] = [:]
                for member in Save.tokenMembers {
                    tokens[member] = try p.optionalTextSecret("tokenResponse." + member)
                }
                self.tokens = tokens
                provider = try p.decode("provider")
                maxLifetimeSeconds = try p.optionalInt("maxLifetimeSeconds")
            }

            public func encodeMembers(to w: inout WireWriter) {
                w.field("service", service)
                w.field("account", account)
                w.key("tokenResponse")
                w.beginObject()
                for (member, value) in tokenResponse.sorted(by: { $0.key < $1.key }) where tokens[member] == nil {
                    w.key(member)
                    w.json(value)
                }
                for (member, token) in tokens.sorted(by: { $0.key < $1.key }) {
                    w.key(member)
                    w.secretText(token)
                }
                w.endObject()
                w.field("provider", provider)
                w.field("maxLifetimeSeconds", maxLifetimeSeconds)
            }
        }

        /// The top-level token members of a token response's own JSON text.
        static let divertedTokenMembers = JSONDivertedPaths(Set(tokenMembers))

        public struct Reply: WireCodable, Equatable {
            public var session: SessionState

            public init(session: SessionState) { self.session = session }
            public init(from p: WireParameters) throws(WireParameterError) { session = try p.decode("session") }
            public func encodeMembers(to w: inout WireWriter) { w.field("session", session) }
        }
    }

    /// The reply of AutoLogin and Refresh: `outcome` ("valid", "refreshed", "reauthRequired",
    /// "offline"), the grant when there is a usable token, and the reason when there is not.
    public struct LoginOutcome: WireCodable, Equatable {
        public var outcome: String
        public var grant: Grant?
        public var reason: String?

        public init(outcome: String, grant: Grant? = nil, reason: String? = nil) {
            self.outcome = outcome
            self.grant = grant
            self.reason = reason
        }

        public init(from p: WireParameters) throws(WireParameterError) {
            outcome = try p.string("outcome")
            grant = try p.optionalDecode("grant")
            reason = try p.optionalString("reason")
        }

        public func encodeMembers(to w: inout WireWriter) {
            w.field("outcome", outcome)
            w.field("grant", grant)
            w.field("reason", reason)
        }
    }

    /// `AutoLogin(service, account) -> (outcome, grant?, reason?)`.
    public enum AutoLogin: VarlinkMethod {
        public static let name = SessionInterface.name + ".AutoLogin"
        public static var replySecrets: SecretLimits { SecretLimits(["grant.accessToken": WireLimits.tokenBytes]) }
        public typealias Request = LoginName
        public typealias Reply = LoginOutcome
    }

    /// `Refresh(service, account) -> (outcome, grant?, reason?)`.
    public enum Refresh: VarlinkMethod {
        public static let name = SessionInterface.name + ".Refresh"
        public static var replySecrets: SecretLimits { AutoLogin.replySecrets }
        public typealias Request = LoginName
        public typealias Reply = LoginOutcome
    }

    /// `Logout(service, account) -> (wasLoggedIn, revoked, revocationQueued, providerCannotRevoke)`.
    public enum Logout: VarlinkMethod {
        public static let name = SessionInterface.name + ".Logout"
        public typealias Request = LoginName

        public struct Reply: WireCodable, Equatable {
            public var wasLoggedIn: Bool
            public var revoked: Bool
            public var revocationQueued: Bool
            public var providerCannotRevoke: Bool

            public init(wasLoggedIn: Bool, revoked: Bool, revocationQueued: Bool, providerCannotRevoke: Bool) {
                self.wasLoggedIn = wasLoggedIn
                self.revoked = revoked
                self.revocationQueued = revocationQueued
                self.providerCannotRevoke = providerCannotRevoke
            }

            public init(from p: WireParameters) throws(WireParameterError) {
                wasLoggedIn = try p.bool("wasLoggedIn")
                revoked = try p.bool("revoked")
                revocationQueued = try p.optionalBool("revocationQueued") ?? false
                providerCannotRevoke = try p.optionalBool("providerCannotRevoke") ?? false
            }

            public func encodeMembers(to w: inout WireWriter) {
                w.field("wasLoggedIn", wasLoggedIn)
                w.field("revoked", revoked)
                w.field("revocationQueued", revocationQueued)
                w.field("providerCannotRevoke", providerCannotRevoke)
            }
        }
    }

    /// `Status(service, account) -> (session)`.
    public enum Status: VarlinkMethod {
        public static let name = SessionInterface.name + ".Status"
        public typealias Request = LoginName
        public typealias Reply = Save.Reply
    }

    /// `List(service?) -> (logins)`.
    public enum List: VarlinkMethod {
        public static let name = SessionInterface.name + ".List"
        public typealias Request = VaultInterface.List.Request

        public struct Reply: WireCodable, Equatable {
            public var logins: [Login]

            public init(logins: [Login]) { self.logins = logins }

            public init(from p: WireParameters) throws(WireParameterError) {
                var logins: [Login] = []
                for login in try p.array("logins") { logins.append(try Login(from: login)) }
                self.logins = logins
            }

            public func encodeMembers(to w: inout WireWriter) {
                w.key("logins")
                w.beginArray()
                for login in logins {
                    w.beginObject()
                    login.encodeMembers(to: &w)
                    w.endObject()
                }
                w.endArray()
            }
        }
    }

    /// `Watch(service?, account?) -> (event)`, called with `more: true`.
    public enum Watch: VarlinkMethod {
        public static let name = SessionInterface.name + ".Watch"

        public struct Request: WireCodable, Equatable {
            public var service: String?
            public var account: String?

            public init(service: String? = nil, account: String? = nil) {
                self.service = service
                self.account = account
            }

            public init(from p: WireParameters) throws(WireParameterError) {
                service = try p.optionalString("service")
                account = try p.optionalString("account")
            }

            public func encodeMembers(to w: inout WireWriter) {
                w.field("service", service)
                w.field("account", account)
            }
        }

        public struct Reply: WireCodable, Equatable {
            public var event: Event

            public init(event: Event) { self.event = event }
            public init(from p: WireParameters) throws(WireParameterError) { event = try p.decode("event") }
            public func encodeMembers(to w: inout WireWriter) { w.field("event", event) }
        }
    }

    /// The interface's error names.
    public enum Errors {
        public static let noSession = SessionInterface.name + ".NoSession"
        public static let locked = SessionInterface.name + ".Locked"
        public static let permissionDenied = SessionInterface.name + ".PermissionDenied"
        public static let invalidParameter = SessionInterface.name + ".InvalidParameter"
        public static let providerRejected = SessionInterface.name + ".ProviderRejected"
        public static let integrityFailure = SessionInterface.name + ".IntegrityFailure"
        public static let storageFailure = SessionInterface.name + ".StorageFailure"
    }
}
