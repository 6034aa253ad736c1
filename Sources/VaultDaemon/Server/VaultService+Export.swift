import FoundationEssentials
import NIOPosix
import Varlink
import VaultAge
import VaultAPI
import VaultCore
import VaultCrypto
import VaultSession

/// `Export`: the daemon reads every item and login from one snapshot, writes the backup's JSON
/// lines (``BackupDocument``) in secure memory and seals them in the age format itself, so the
/// plaintext never crosses the socket; the sealed file goes back in parts.
extension VaultService {
    /// The largest part of the file in one reply (before base64): replies stay far below the
    /// client's 16 MiB frame limit whatever the vault holds.
    static let exportPartBytes = 256 * 1024

    func export(_ request: VaultInterface.Export.Request, call: DaemonCall) throws -> Answer<VaultInterface.Export.Reply> {
        guard call.more else { throw VarlinkError.expectedMore }
        return .later { try await self.export(request, peer: call.peer, context: call.context) }
    }

    private func export(_ request: VaultInterface.Export.Request, peer: PeerCredentials,
                        context: VarlinkCallContext) async throws -> VaultInterface.Export.Reply {
        let recipients = try Self.recipients(request)
        let (items, logins) = try await backupRecords()
        var writer = BackupDocument.Writer(header: .init(
            format: BackupDocument.format, version: BackupDocument.version, created: clock.now.timeIntervalSince1970,
            items: Int64(items.count), logins: Int64(logins.count)))
        for item in items { writer.item(.init(item.metadata), secret: item.secret) }
        for (key, session) in logins { writer.login(.init(session, key: key)) }
        let plaintext = writer.finish()
        let armored = request.armor == true
        // scrypt (2^18, 256 MiB) and the payload run on the blocking pool, never a cooperative
        // thread, one backup at a time (the pool has one thread for them).
        let file = try await exportTurn.withLock(0) {
            try await threadPool.runIfActive { try AgeEncryptor(recipients: recipients).seal(plaintext, armored: armored) }
        }
        access.accessLog?.recordOwnerNote(peer, operation: VaultInterface.Export.operation, note:
            "sealed a backup of \(items.count) item(s) and \(logins.count) login(s) for "
            + recipients.map(Self.fingerprint).joined(separator: ", "))
        var offset = 0
        while file.count - offset > Self.exportPartBytes {
            let part = Self.base64(file[offset..<(offset + Self.exportPartBytes)])
            try await context.reply(.typed(VaultInterface.Export.Reply(part: part, items: Int64(items.count), logins: Int64(logins.count))))
            offset += Self.exportPartBytes
        }
        return VaultInterface.Export.Reply(part: Self.base64(file[offset...]), items: Int64(items.count), logins: Int64(logins.count))
    }

    /// A passphrase or X25519 recipients, one of the two.
    static func recipients(_ request: VaultInterface.Export.Request) throws -> [AgeRecipient] {
        switch (request.passphrase, request.recipients) {
        case (let passphrase?, nil):
            guard passphrase.count > 0 else { throw VaultError.invalidArgument("the backup's passphrase is empty") }
            return [try AgeRecipient.scrypt(passphrase: passphrase)]
        case (nil, let texts?) where !texts.isEmpty:
            guard texts.count <= 64 else { throw VaultError.invalidArgument("at most 64 recipients") }
            return try texts.map { text in
                do { return try AgeRecipient.x25519(text) } catch {
                    throw VaultError.invalidArgument("recipient \(text.prefix(80).debugDescription) is not an age X25519 recipient (\"age1…\", as `age-keygen -y` prints)")
                }
            }
        case (nil, _):
            throw VaultError.invalidArgument("give a passphrase or at least one age recipient to seal the backup for")
        case (_?, _?):
            throw VaultError.invalidArgument("give a passphrase or recipients, not both: age seals a passphrase file for nobody else")
        }
    }

    /// For the access log: an X25519 recipient as its text and the first 8 bytes of its SHA-256
    /// (so two logs can be compared without the whole key), a passphrase as "passphrase (scrypt)".
    static func fingerprint(_ recipient: AgeRecipient) -> String {
        guard let text = recipient.x25519Text else { return "passphrase (scrypt)" }
        let digest = SecureBytes(copying: Array(text.utf8)).sha256().withUnsafeBytes { hash in
            hash.prefix(8).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        }
        return "\(text) (SHA-256 \(digest))"
    }

    /// Every item and login, from one snapshot of the store that holds them. Items kept in the
    /// desktop keyring are read one by one beside it (the keyring has no snapshot).
    private func backupRecords() async throws -> (items: [RetrievedItem], logins: [(ItemKey, LoginSession)]) {
        guard let store = ownRecords as? any TokenStoreSnapshots else {
            throw VaultError(.unsupported, "this daemon's store cannot be read in one snapshot, so it cannot make a backup")
        }
        let records = try await store.snapshot()
        var items: [RetrievedItem] = []
        var logins: [(ItemKey, LoginSession)] = []
        for record in records {
            if let key = SessionItems.login(of: record.metadata.key) {
                logins.append((key, try LoginSession(sealedRecord: record.secret)))
            } else if !record.metadata.key.isReserved {
                items.append(record)
            }
        }
        if itemsApart {
            for metadata in try await self.items.list(service: nil) {
                do { items.append(try await self.items.retrieve(metadata.key)) } catch let error as VaultError where error.code == .notFound {
                    continue  // deleted meanwhile
                }
            }
        }
        return (items, logins)
    }

    static func base64(_ bytes: ArraySlice<UInt8>) -> String {
        Data(bytes).base64EncodedString()
    }
}

extension SessionInterface.BackupLogin {
    /// The backup's form of a stored login: every field the daemon keeps but its random login id.
    init(_ session: LoginSession, key: ItemKey) {
        let provider = session.provider
        self.init(
            service: key.service, account: key.account,
            provider: .init(kind: provider.kind.rawValue, tokenEndpoint: provider.tokenEndpoint.absoluteString,
                            revocationEndpoint: provider.revocationEndpoint?.absoluteString, clientId: provider.clientID,
                            clientSecret: provider.clientSecret, clientAuthentication: provider.clientAuthentication.rawValue,
                            issuer: provider.issuer?.absoluteString, apiKey: provider.apiKey),
            accessToken: session.accessToken, refreshToken: session.refreshToken, idToken: session.idToken,
            tokenType: session.tokenType, scopes: session.scopes,
            accessTokenExpiresAt: session.accessTokenExpiresAt?.timeIntervalSince1970,
            refreshTokenExpiresAt: session.refreshTokenExpiresAt?.timeIntervalSince1970,
            absoluteExpiresAt: session.absoluteExpiresAt?.timeIntervalSince1970,
            issuedAt: session.issuedAt.timeIntervalSince1970, signedInAt: session.signedInAt.timeIntervalSince1970,
            lastRefreshedAt: session.lastRefreshedAt?.timeIntervalSince1970, userId: session.userID)
    }
}
