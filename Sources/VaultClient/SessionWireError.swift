import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import Varlink
import VaultAPI
import VaultCore
import VaultCrypto
import VaultSession

/// Reads the errors of `org.sortedvault.session` back into `VaultError` (see ``VaultWireError``;
/// the daemon writes them: `SessionService.errorReply(for:item:)`).
public enum SessionWireError {
    public static func malformed(_ what: String) -> VaultError {
        VaultError.storageFailure("the daemon sent a malformed \(what) reply")
    }

    // MARK: Errors

    /// The vault error a client reports for an error reply of this interface
    /// (``ErrorReply/session(_:_:as:)``).
    public static func decode(_ name: String, _ parameters: [String: JSONValue]) -> VaultError {
        let (code, reason) = ErrorReply.session(name, parameters, as: VaultError.Code.self)
        return VaultError(code, reason)
    }
}
