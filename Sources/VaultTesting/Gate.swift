/// A door that tasks wait at until the test opens it: holds some requests or some work (where
/// ``ScriptedOAuthTransport/hold()`` would hold every request).
///
/// ```swift
/// let gate = Gate()
/// let work = Task { await gate.wait(); return try await refresh() }
/// // … check what holds while the work waits …
/// await gate.open()
/// ```
public actor Gate {
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    public init() {}

    /// Returns once the gate is open (at once if it already is).
    public func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiters.append($0) }
    }

    /// Opens the gate for good: every waiter goes on, and later ones do not wait.
    public func open() {
        isOpen = true
        for waiter in waiters { waiter.resume() }
        waiters = []
    }
}
