import Foundation
import Varlink
import VaultSession

/// The `List` method of `org.sortedvault.session`: its `Login` entries, both ways. Never a token.
extension SessionWireFormat {
    public static func encode(_ entry: SessionListEntry) -> JSONValue {
        var object: [String: JSONValue] = [
            "service": .string(entry.service), "account": .string(entry.account), "providerKind": .string(entry.providerKind),
            "state": .string(entry.state),
            "accessTokenExpiresAt": .double(entry.accessTokenExpiresAt.timeIntervalSince1970),
            "hasRefreshToken": .bool(entry.hasRefreshToken),
        ]
        object["userId"] = entry.userID.map { .string($0) }
        object["refreshTokenExpiresAt"] = entry.refreshTokenExpiresAt.map { .double($0.timeIntervalSince1970) }
        object["absoluteExpiresAt"] = entry.absoluteExpiresAt.map { .double($0.timeIntervalSince1970) }
        return .object(object)
    }

    /// The List reply.
    public static func encode(_ entries: [SessionListEntry]) -> [String: JSONValue] {
        ["logins": .array(entries.map(encode))]
    }

    public static func decodeList(_ reply: [String: JSONValue]) throws -> [SessionListEntry] {
        guard let logins = reply["logins"]?.arrayValue else { throw malformed("List") }
        return try logins.map { value in
            guard let object = value.objectValue, let service = object["service"]?.stringValue,
                  let account = object["account"]?.stringValue, let state = object["state"]?.stringValue,
                  let accessExpiry = object["accessTokenExpiresAt"]?.doubleValue else { throw malformed("List") }
            func date(_ field: String) -> Date? {
                object[field]?.doubleValue.map(Date.init(timeIntervalSince1970:))
            }
            return SessionListEntry(
                service: service, account: account, providerKind: object["providerKind"]?.stringValue ?? ProviderKind.oauth2.rawValue,
                userID: object["userId"]?.stringValue, state: state,
                accessTokenExpiresAt: Date(timeIntervalSince1970: accessExpiry),
                refreshTokenExpiresAt: date("refreshTokenExpiresAt"), absoluteExpiresAt: date("absoluteExpiresAt"),
                hasRefreshToken: object["hasRefreshToken"]?.boolValue ?? false)
        }
    }
}
