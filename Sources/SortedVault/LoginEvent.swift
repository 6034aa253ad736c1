import VaultSession

/// What ``VaultLogin/events`` streams: first the login as it stands, then each change.
public enum LoginEvent: Sendable, Equatable {
    /// The first element: the login's state when the watch began; nil when none is stored (sign in).
    case current(SessionStatus?)
    /// Something happened to the login after that (saved, refreshed, expired, reauthRequired, loggedOut).
    case changed(SessionEvent)
}
