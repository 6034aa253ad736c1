import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// A revocation that has not reached the provider yet: the payload of an entry in the store's
/// ``RevocationOutbox``, queued with the wipe of its login (so a crash in the middle of a logout
/// loses neither) and removed once the provider confirmed. Sealed like the login it came from.
/// `id` is the outbox entry's id when read back; ``item`` is where ``LocalRevocationOutbox`` keeps
/// an entry of that id.
struct QueuedRevocation: Sendable {
    let id: String
    let login: ItemKey
    let loginID: [UInt8]
    let accessToken: SecureBytes
    let refreshToken: SecureBytes?
    let provider: OAuthProvider
    let queuedAt: Date

    static let magic: [UInt8] = Array("SVR1".utf8)

    init(for session: LoginSession, login: ItemKey, at now: Date) {
        id = SecureRandomID.hex(SecureRandomID.make())
        self.login = login
        loginID = session.loginID
        accessToken = session.accessToken
        refreshToken = session.refreshToken
        provider = session.provider
        queuedAt = now
    }

    var item: ItemKey {
        get throws { try ItemKey(service: SessionItems.revocationService, account: id) }
    }

    func sealedRecord() -> SecureBytes {
        var writer = SealedFieldsWriter(magic: Self.magic)
        writer.text(SessionField.service, login.service)
        writer.text(SessionField.account, login.account)
        writer.bytes(SessionField.loginID, loginID)
        writer.secret(SessionField.accessToken, accessToken)
        writer.secret(SessionField.refreshToken, refreshToken)
        writer.date(SessionField.issuedAt, queuedAt)
        provider.write(into: &writer)
        return writer.finish()
    }

    init(id: String, sealedRecord record: SecureBytes) throws {
        let reader = try SealedFieldsReader(record, magic: Self.magic, what: "queued revocation")
        guard let service = reader.text(SessionField.service), let account = reader.text(SessionField.account),
              let loginID = reader.bytes(SessionField.loginID), let accessToken = reader.secret(SessionField.accessToken),
              let queuedAt = reader.date(SessionField.issuedAt) else {
            throw SealedFieldsReader.damaged("queued revocation")
        }
        self.id = id
        login = try ItemKey(storedService: service, account: account)
        self.loginID = loginID
        self.accessToken = accessToken
        refreshToken = reader.secret(SessionField.refreshToken)
        provider = try OAuthProvider(reading: reader)
        self.queuedAt = queuedAt
    }
}
