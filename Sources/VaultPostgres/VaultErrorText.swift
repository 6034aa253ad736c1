import VaultCore

/// The fleet store's own failures, worded once.
enum VaultErrorText {
    static func newerSchema(_ version: Int32, known: Int32) -> VaultError {
        VaultError(.unsupportedFormat,
                   "the fleet database is at schema version \(version), newer than this build knows (\(known)); upgrade this host's sortedvault")
    }

    static let rowDoesNotOpen = VaultError.integrityFailure(
        "an item's row in the fleet database failed its integrity check: it was damaged, tampered with, or moved from another row, generation or key; delete the item and store it again")

    static func unknownKey(_ keyID: Int32) -> VaultError {
        VaultError.integrityFailure(
            "an item's row names data key \(keyID), which the fleet database's key table does not hold; the row was damaged or restored from elsewhere: delete the item and store it again")
    }

    static func keyDoesNotOpen(_ keyID: Int32) -> VaultError {
        VaultError(.wrongPassphrase,
                   "this host's master key does not open the fleet's key \(keyID): every host of a fleet needs the same key source; copy the key file from a host that serves (docs/fleet.md)")
    }

    static func retiredKeyReactivated(_ keyID: Int32) -> VaultError {
        VaultError.integrityFailure(
            "the fleet database's key table marks data key \(keyID) active, but a rewrap retired it: the table was changed by hand, and nothing is written under that key; restore the key table from a backup or run `sortedvault fleet rewrap` after setting the newest key back to active (docs/fleet.md)")
    }

    static let noActiveKey = VaultError.storageFailure(
        "the fleet database has no active data key; its key table was changed by hand: restore it from a backup")
}

extension VaultErrorText {
    static let outboxEntryDoesNotOpen = VaultError.integrityFailure(
        "a revocation outbox entry in the fleet database failed its integrity check: it was damaged, tampered with, or moved from another entry or key")
}
