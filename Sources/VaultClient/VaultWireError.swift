import BoundedJSON
import VaultAPI
import VaultCore

/// Reads the interface's error replies back into `VaultError`, so that a client sees the same
/// `VaultError.Code` it would get from an in-process store (the daemon writes them:
/// `VaultService.errorReply(for:item:)`). NotFound and Locked never mix.
public enum VaultWireError {

    /// The vault error a client reports for a varlink error reply (``ErrorReply/vault(_:_:as:)``).
    public static func decode(_ name: String, _ parameters: [String: JSONValue]) -> VaultError {
        let (code, reason) = ErrorReply.vault(name, parameters, as: VaultError.Code.self)
        return VaultError(code, reason)
    }
}

/// The vault's codes for error replies, where their names differ from the reply's kinds.
extension VaultError.Code: ErrorReplyCode {
    public static var invalidParameter: Self { .invalidArgument }
    public static var unsupported: Self { .unavailable }
    public static var failure: Self { .storageFailure }
}
