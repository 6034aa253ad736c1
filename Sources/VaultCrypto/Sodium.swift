import CSodium

/// libsodium's one-time initialisation, run the first time any crypto is used.
///
/// `sodium_init()` is thread-safe and idempotent; Swift initialises a global `let` exactly once.
private let sodiumInitialized: Bool = sodium_init() >= 0

/// Makes sure libsodium is ready; traps if the library cannot initialise (no usable RNG),
/// because continuing without one would fail open.
@inline(__always)
func ensureSodium() {
    precondition(sodiumInitialized, "libsodium failed to initialise: no secure random source is available")
}
