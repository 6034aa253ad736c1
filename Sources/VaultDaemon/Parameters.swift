import Foundation
import Varlink
import VaultCore
import VaultCrypto
import VaultProtocol

/// Typed, validated access to a call's parameters. Every problem becomes the interface's
/// `InvalidParameter` error naming the parameter; the reason never repeats a secret.
struct Parameters {
    let call: VarlinkCall

    init(_ call: VarlinkCall) { self.call = call }

    func key() throws -> ItemKey {
        let service = try name("service")
        let account = try name("account")
        return try ItemKey(service: service, account: account)
    }

    /// The key if both names are present and valid, for error replies.
    func optionalKey() throws -> ItemKey? {
        guard let service = call.parameters["service"]?.stringValue, let account = call.parameters["account"]?.stringValue else { return nil }
        return try? ItemKey(service: service, account: account)
    }

    /// A service or account name: a string that passes `ItemKey`'s rules.
    func name(_ parameter: String) throws -> String {
        guard let value = call.parameters[parameter] else { throw invalid(parameter, "is missing") }
        guard let text = value.stringValue else { throw invalid(parameter, "must be a string") }
        do {
            try ItemKey.checkName(text, what: parameter)
        } catch let error as VaultError {
            throw invalid(parameter, error.reason)
        }
        return text
    }

    func optionalName(_ parameter: String) throws -> String? {
        guard let value = call.parameters[parameter], value != .null else { return nil }
        return try name(parameter)
    }

    /// A base64 secret, decoded straight into secure memory.
    func secret(_ parameter: String) throws -> SecureBytes {
        guard let value = call.parameters[parameter] else { throw invalid(parameter, "is missing") }
        guard let text = value.stringValue else { throw invalid(parameter, "must be a base64 string") }
        guard text.utf8.count <= (Limits.maximumSecretBytes + 2) / 3 * 4 else {
            throw invalid(parameter, "is over the \(Limits.maximumSecretBytes / 1024) KiB limit")
        }
        guard let bytes = SecureBytes(base64Encoded: text) else { throw invalid(parameter, "is not valid base64") }
        return bytes
    }

    /// A passphrase: a non-secret-shaped string moved into secure memory.
    func secretText(_ parameter: String) throws -> SecureBytes {
        guard let value = call.parameters[parameter] else { throw invalid(parameter, "is missing") }
        guard let text = value.stringValue else { throw invalid(parameter, "must be a string") }
        guard text.utf8.count <= 4096 else { throw invalid(parameter, "is longer than 4096 bytes") }
        return SecureBytes(copying: text.utf8)
    }

    func storeOptions() throws -> StoreOptions {
        var label: String?
        if let value = call.parameters["label"], value != .null {
            guard let text = value.stringValue else { throw invalid("label", "must be a string") }
            label = text
        }
        var attributes: [String: String] = [:]
        if let value = call.parameters["attributes"], value != .null {
            guard let object = value.objectValue else { throw invalid("attributes", "must be an object of strings") }
            for (name, value) in object {
                guard let text = value.stringValue else { throw invalid("attributes", "must be an object of strings") }
                attributes[name] = text
            }
        }
        var expires: Date?
        if let value = call.parameters["expires"], value != .null {
            guard let seconds = value.doubleValue, seconds.isFinite else { throw invalid("expires", "must be seconds since 1970") }
            expires = Date(timeIntervalSince1970: seconds)
        }
        do {
            return try StoreOptions(label: label, attributes: attributes, expiresAt: expires)
        } catch let error as VaultError {
            let parameter = error.reason.hasPrefix("label") ? "label" : "attributes"
            throw invalid(parameter, error.reason)
        }
    }

    private func invalid(_ parameter: String, _ reason: String) -> VarlinkError {
        let text = reason.hasPrefix(parameter) ? reason : "\(parameter) \(reason)"
        return VarlinkError(name: call.interface + ".InvalidParameter", parameters: ["parameter": .string(parameter), "reason": .string(text)])
    }
}
