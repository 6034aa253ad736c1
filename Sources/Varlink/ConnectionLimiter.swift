/// Counts open connections in total and per uid, and refuses any beyond the limits.
struct ConnectionLimiter: Sendable {
    let maxTotal: Int
    let maxPerUID: Int
    private(set) var total = 0
    private var perUID: [UInt32: Int] = [:]

    init(maxTotal: Int, maxPerUID: Int) {
        self.maxTotal = maxTotal
        self.maxPerUID = maxPerUID
    }

    /// Counts a new connection from `uid`, or returns false when it would exceed a limit.
    mutating func admit(uid: UInt32) -> Bool {
        let current = perUID[uid, default: 0]
        guard total < maxTotal, current < maxPerUID else { return false }
        total += 1
        perUID[uid] = current + 1
        return true
    }

    /// Forgets a connection admitted earlier.
    mutating func release(uid: UInt32) {
        total -= 1
        let remaining = perUID[uid, default: 1] - 1
        perUID[uid] = remaining > 0 ? remaining : nil
    }
}
