import CSecretLoader
import VaultCore

/// The errors of the Secret Service backends, worded for the person who has to fix them. None holds
/// a secret; they name collections and D-Bus errors only.
enum SecretServiceErrors {
    static func noSessionBus(_ detail: String) -> VaultError {
        VaultError(.unavailable,
            "no D-Bus session bus, so no desktop keyring (Secret Service): DBUS_SESSION_BUS_ADDRESS is unset or its bus is gone (\(detail)). Run sortedvault inside your desktop session (or under dbus-run-session with a keyring started), or use the embedded store")
    }

    static func noProvider(detail: String) -> VaultError {
        VaultError(.unavailable,
            "no Secret Service provider on the session bus (nothing answers as org.freedesktop.secrets: \(detail)). Start your keyring — gnome-keyring-daemon, KeePassXC with Secret Service integration on, or KWallet — and try again")
    }

    static func noLibrary(_ reason: String) -> VaultError {
        VaultError(.unavailable,
            "the desktop keyring (Secret Service) needs libsecret, which could not be loaded (\(reason)): install it (Debian: apt install libsecret-1-0), or use the embedded store")
    }

    static let noDefaultCollection = VaultError(.unavailable,
        "the Secret Service has no default collection to keep items in: create one in your keyring manager (Seahorse, KeePassXC) and make it the default")

    static func locked(_ collectionPath: String) -> VaultError {
        let name = collectionPath.split(separator: "/").last.map(String.init) ?? collectionPath
        return VaultError(.locked,
            "the desktop keyring (collection \"\(name)\") is locked: unlock it — log in to the desktop session, or unlock it in your keyring manager — and try again")
    }

    static func meansNoProvider(_ error: GLibError) -> Bool {
        guard let name = error.remoteName else {
            return error.domain == sv_g_dbus_error_quark() && error.code == Int32(SV_G_DBUS_ERROR_SERVICE_UNKNOWN.rawValue)
        }
        return name == "org.freedesktop.DBus.Error.ServiceUnknown" || name == "org.freedesktop.DBus.Error.NameHasNoOwner"
            || name.hasPrefix("org.freedesktop.DBus.Error.Spawn.")
    }

    /// The provider crashed, quit or stopped answering mid-operation.
    static func meansGone(_ error: GLibError) -> Bool {
        if error.domain == sv_g_io_error_quark() {
            return [SV_G_IO_ERROR_TIMED_OUT, SV_G_IO_ERROR_CLOSED, SV_G_IO_ERROR_CONNECTION_CLOSED, SV_G_IO_ERROR_BROKEN_PIPE]
                .map { Int32($0.rawValue) }.contains(error.code)
        }
        if let name = error.remoteName {
            return name == "org.freedesktop.DBus.Error.NoReply" || name == "org.freedesktop.DBus.Error.Disconnected"
                || name == "org.freedesktop.DBus.Error.UnknownObject" || name == "org.freedesktop.DBus.Error.UnknownMethod"
        }
        return false
    }

    static func map(_ error: GLibError, doing what: String) -> VaultError {
        if error.domain == sv_secret_error_get_quark() && error.code == Int32(SV_SECRET_ERROR_IS_LOCKED.rawValue) || error.remoteName == "org.freedesktop.Secret.Error.IsLocked" {
            return VaultError(.locked, "the desktop keyring is locked (while trying to \(what)): unlock it and try again")
        }
        if meansNoProvider(error) { return noProvider(detail: error.message) }
        if meansGone(error) {
            return VaultError(.unavailable,
                "the Secret Service stopped answering while trying to \(what) (\(error.message)): check that your keyring daemon is running, then try again")
        }
        return VaultError(.storageFailure, "the Secret Service could not \(what): \(error.message)")
    }
}
