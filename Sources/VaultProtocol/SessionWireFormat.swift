import Foundation
import Varlink
import VaultCore
import VaultCrypto
import VaultSession

/// The JSON shapes of `org.sortedvault.session`, both ways, and its errors.
public enum SessionWireFormat {
    static let prefix = SessionInterfaceDescription.name + "."
    public static let noSession = prefix + "NoSession"
    public static let locked = prefix + "Locked"
    public static let permissionDenied = prefix + "PermissionDenied"
    public static let invalidParameter = prefix + "InvalidParameter"
    public static let providerRejected = prefix + "ProviderRejected"
    public static let integrityFailure = prefix + "IntegrityFailure"
    public static let storageFailure = prefix + "StorageFailure"

    // MARK: Replies

    /// The AutoLogin and Refresh reply. The access token leaves secure memory here, for the wire.
    public static func encode(_ result: AutoLoginResult) -> [String: JSONValue] {
        var reply: [String: JSONValue] = ["outcome": .string(result.outcome)]
        if let grant = result.grant { reply["grant"] = encode(grant) }
        switch result {
        case .reauthRequired(let reason): reply["reason"] = .string(reason.rawValue)
        case .offline(_, let reason): reply["reason"] = .string(reason)
        case .valid, .refreshed: break
        }
        return reply
    }

    static func encode(_ grant: AccessGrant) -> JSONValue {
        .object([
            "accessToken": .string(grant.accessToken.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }),
            "tokenType": .string(grant.tokenType),
            "expiresAt": .double(grant.expiresAt.timeIntervalSince1970),
            "scopes": .array(grant.scopes.map { .string($0) }),
        ])
    }

    public static func encode(_ status: SessionStatus) -> JSONValue {
        var object: [String: JSONValue] = [
            "state": .string(status.state), "providerKind": .string(status.providerKind), "tokenType": .string(status.tokenType),
            "scopes": .array(status.scopes.map { .string($0) }),
            "accessTokenExpiresAt": .double(status.accessTokenExpiresAt.timeIntervalSince1970),
            "hasRefreshToken": .bool(status.hasRefreshToken), "hasIdToken": .bool(status.hasIDToken),
            "issuedAt": .double(status.issuedAt.timeIntervalSince1970),
            "signedInAt": .double(status.signedInAt.timeIntervalSince1970),
            "tokenEndpoint": .string(status.tokenEndpoint), "clientId": .string(status.clientID),
            "clientAuthentication": .string(status.clientAuthentication), "hasClientSecret": .bool(status.hasClientSecret),
        ]
        object["refreshTokenExpiresAt"] = status.refreshTokenExpiresAt.map { .double($0.timeIntervalSince1970) }
        object["absoluteExpiresAt"] = status.absoluteExpiresAt.map { .double($0.timeIntervalSince1970) }
        object["lastRefreshedAt"] = status.lastRefreshedAt.map { .double($0.timeIntervalSince1970) }
        object["userId"] = status.userID.map { .string($0) }
        object["revocationEndpoint"] = status.revocationEndpoint.map { .string($0) }
        object["retryNotBefore"] = status.retryNotBefore.map { .double($0.timeIntervalSince1970) }
        return .object(object)
    }

    public static func encode(_ event: SessionEvent) -> JSONValue {
        .object([
            "kind": .string(event.kind.rawValue), "service": .string(event.key.service),
            "account": .string(event.key.account), "at": .double(event.at.timeIntervalSince1970),
        ])
    }

    public static func encode(_ result: LogoutResult) -> [String: JSONValue] {
        ["wasLoggedIn": .bool(result.wasLoggedIn), "revoked": .bool(result.revoked), "revocationQueued": .bool(result.revocationQueued),
         "providerCannotRevoke": .bool(result.providerCannotRevoke)]
    }

    public static func decodeAutoLogin(_ reply: [String: JSONValue]) throws -> AutoLoginResult {
        let grant = try reply["grant"].flatMap { $0.isNull ? nil : $0 }.map(decodeGrant)
        let reason = reply["reason"]?.stringValue ?? ""
        switch reply["outcome"]?.stringValue {
        case "valid"?:
            guard let grant else { throw malformed("AutoLogin") }
            return .valid(grant)
        case "refreshed"?:
            guard let grant else { throw malformed("AutoLogin") }
            return .refreshed(grant)
        case "reauthRequired"?:
            return .reauthRequired(ReauthReason(rawValue: reason) ?? .noSession)
        case "offline"?:
            return .offline(grant, reason: reason)
        default:
            throw malformed("AutoLogin")
        }
    }

    static func decodeGrant(_ value: JSONValue) throws -> AccessGrant {
        guard let object = value.objectValue, let token = object["accessToken"]?.stringValue,
              let type = object["tokenType"]?.stringValue, let expires = object["expiresAt"]?.doubleValue else {
            throw malformed("grant")
        }
        return AccessGrant(accessToken: SecureBytes(copying: token.utf8), tokenType: type,
                           expiresAt: Date(timeIntervalSince1970: expires),
                           scopes: object["scopes"]?.arrayValue?.compactMap(\.stringValue) ?? [])
    }

    public static func decodeEvent(_ value: JSONValue?) throws -> (kind: String, service: String, account: String, at: Date) {
        guard let object = value?.objectValue, let kind = object["kind"]?.stringValue,
              let service = object["service"]?.stringValue, let account = object["account"]?.stringValue,
              let at = object["at"]?.doubleValue else { throw malformed("event") }
        return (kind, service, account, Date(timeIntervalSince1970: at))
    }

    static func malformed(_ what: String) -> VaultError {
        VaultError.storageFailure("the daemon sent a malformed \(what) reply")
    }

    // MARK: Errors

    /// The interface's error for a vault error.
    public static func encode(_ error: VaultError, key: ItemKey?) -> VarlinkError {
        switch error.code {
        case .notFound:
            return VarlinkError(name: noSession, parameters: ["service": .string(key?.service ?? ""), "account": .string(key?.account ?? "")])
        case .locked:
            return VarlinkError(name: locked)
        case .invalidArgument:
            return VarlinkError(name: invalidParameter, parameters: ["parameter": "", "reason": .string(error.reason)])
        case .permissionDenied:
            return VarlinkError(name: permissionDenied, parameters: ["operation": "", "reason": .string(error.reason)])
        case .providerRejected:
            return VarlinkError(name: providerRejected, parameters: ["error": "", "reason": .string(error.reason)])
        case .integrityFailure:
            return VarlinkError(name: integrityFailure, parameters: ["reason": .string(error.reason)])
        default:
            return VarlinkError(name: storageFailure, parameters: ["reason": .string(error.reason)])
        }
    }

    /// The vault error a client reports for an error reply of this interface.
    public static func decode(_ error: VarlinkError) -> VaultError {
        let reason = error.parameters["reason"]?.stringValue
        switch error.name {
        case noSession:
            let service = error.parameters["service"]?.stringValue ?? ""
            let account = error.parameters["account"]?.stringValue ?? ""
            return VaultError(.notFound, "no login is stored for service \(service.debugDescription), account \(account.debugDescription); sign in")
        case locked:
            return VaultError(.locked, "the vault is locked: run `sortedvault unlock`")
        case permissionDenied:
            let operation = error.parameters["operation"]?.stringValue ?? "this"
            return VaultError(.permissionDenied,
                "the daemon's access policy does not allow \(operation); ask the vault's owner to add a rule to its policy")
        case invalidParameter:
            return VaultError(.invalidArgument, reason ?? "invalid parameter \(error.parameters["parameter"]?.stringValue ?? "")")
        case providerRejected:
            return VaultError(.providerRejected, reason ?? "the provider refused the request")
        case integrityFailure:
            return VaultError(.integrityFailure, reason ?? "a stored login failed its integrity check")
        case storageFailure:
            return VaultError(.storageFailure, reason ?? "the daemon's store failed")
        default:
            return VaultWireError.decode(error)
        }
    }
}
