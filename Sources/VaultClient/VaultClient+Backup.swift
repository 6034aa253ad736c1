import FoundationEssentials
import NIOPosix
import Varlink
import VaultAPI
import VaultCore
import VaultCrypto
import VaultSession

/// A sealed backup made by the daemon (`Export`), and the login half of a restore (`Restore`).
public struct SealedBackup: Sendable {
    /// The age file, as the daemon sealed it.
    public let file: [UInt8]
    public let items: Int
    public let logins: Int
}

extension VaultClient {
    /// Asks the daemon for a backup of every item and login, sealed for `passphrase` or for
    /// `recipients` (`age1…`), one of the two. The parts come on a connection of this call's own.
    public func export(passphrase: SecureBytes?, recipients: [String]?, armored: Bool = false) async throws -> SealedBackup {
        let path = socketPath, timeout = self.timeout
        let request = VaultInterface.Export.Request(passphrase: passphrase, recipients: recipients, armor: armored ? true : nil)
        return try await threadPool.runIfActive {
            do {
                let connection = try Self.connect(path, timeout: timeout)
                var frame: WireBytes? = VarlinkWire.encodeCall(VaultInterface.Export.self, request, more: true)
                var file: [UInt8] = []
                while true {
                    switch try Self.decode(VaultInterface.Export.self, try Self.receive(frame, on: connection)) {
                    case .error(let name, let parameters):
                        throw VaultWireError.decode(name, parameters)
                    case .reply(let reply, let continues):
                        guard let part = Data(base64Encoded: reply.part) else {
                            throw VaultError.storageFailure("the daemon at \(path) sent a part of the backup that is not base64")
                        }
                        file.append(contentsOf: part)
                        if !continues { return SealedBackup(file: file, items: Int(reply.items), logins: Int(reply.logins)) }
                    }
                    frame = nil
                }
            } catch let error as VarlinkClientError {
                throw Self.vaultError(error, socketPath: path)
            } catch let error as WireReplyError {
                throw VaultError.storageFailure("the daemon at \(path) sent a \(error.description)")
            }
        }
    }
}

extension SessionClient {
    /// Puts back a login from a backup; what happened (``LoginRestoreOutcome``).
    public func restore(_ login: SessionInterface.BackupLogin, replace: Bool) async throws -> LoginRestoreOutcome {
        let reply = try await restore(SessionInterface.Restore.Request(login: login, replace: replace ? true : nil))
        switch reply.outcome {
        case .restored: return .restored
        case .same: return .same
        case .kept: return .kept
        case .ended: return .ended
        }
    }
}
