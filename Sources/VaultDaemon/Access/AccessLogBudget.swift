/// How many lines one program may put into the access log: a burst, then a steady rate (a token
/// bucket per uid and executable, one for allowed and one for denied lines). Past it, its lines are
/// counted, not written, and one summary line says how many there were, of what, since when.
///
/// Without it any local program could erase the owner's record in about a second: 4,096 denied
/// calls, or a flood of connections no rule admits, pushed every earlier line out of the capped log.
/// With it a program that is refused can add at most ``denied``'s burst and then a line every
/// ten seconds, however fast it calls; all refused programs together at most ``allDenied``'s (so
/// copies of one program under many paths gain nothing); and a periodic flush writes at most
/// ``summariesPerFlush`` summaries, the rest as one line for all other programs. The counts stay exact.
///
/// ```swift
/// var budget = AccessLogBudget()
/// switch budget.admit(peer, allowed: false, operation: "retrieve", at: now) { … }
/// ```
struct AccessLogBudget {
    struct Rate {
        /// Lines written at once before the rate applies.
        var burst: Double
        /// Lines per second after that.
        var perSecond: Double
    }

    /// Refusals: a program that keeps being refused is summarised after 20 lines, then one line
    /// every 10 s.
    static let denied = Rate(burst: 20, perSecond: 0.1)
    /// Allowed calls: a busy client (a build that asks for a token per step) writes 600 lines at
    /// once, then 10 a second, and only a flood is summarised.
    static let allowed = Rate(burst: 600, perSecond: 10)
    /// Every refused program together: 200 lines at once, then one a second.
    static let allDenied = Rate(burst: 200, perSecond: 1)
    /// Summaries a periodic flush writes one by one; the rest are added into one line.
    static let summariesPerFlush = 16
    /// Programs tracked at once; past it the one seen least recently is summarised and forgotten,
    /// so the budget's memory is bounded whatever the number of programs.
    static let maxPrograms = 256

    /// Who a line is about: a new process of the same program shares its budget.
    struct Program: Hashable {
        var uid: UInt32
        var executable: String
    }

    /// What was counted and not written for one program.
    struct Suppressed {
        var since: Double
        var counts: [String: Int] = [:]  // "denied retrieve" → how many
        var total: Int { counts.values.reduce(0, +) }
    }

    private struct Tally {
        var tokens: (allowed: Double, denied: Double)
        var refilledAt: Double
        var lastSeen: Double
        var suppressed: Suppressed?
    }

    private var tallies: [Program: Tally] = [:]
    private var allDeniedTokens = AccessLogBudget.allDenied.burst
    private var allDeniedRefilledAt: Double?
    /// What was counted for programs no longer tracked, or past a flush's line count: one summary.
    private var others: Suppressed?
    /// The name ``others`` is written under.
    static let otherPrograms = Program(uid: UInt32.max, executable: "(other programs)")

    /// What to do with one line, and the summaries to write first (what was counted for a program
    /// since its last line, or for a program forgotten to make room).
    struct Verdict {
        var write: Bool
        var summaries: [(Program, Suppressed)]
    }

    /// Takes one line of `program`'s from its budget, at `now` (seconds).
    mutating func admit(_ program: Program, allowed: Bool, operation: String, at now: Double) -> Verdict {
        var summaries: [(Program, Suppressed)] = []
        if tallies.count >= Self.maxPrograms, tallies[program] == nil,
           let oldest = tallies.min(by: { $0.value.lastSeen < $1.value.lastSeen }) {
            tallies[oldest.key] = nil
            if let suppressed = oldest.value.suppressed { merge(suppressed, intoOthersAt: now) }
        }
        if !allowed {
            let elapsed = max(0, now - (allDeniedRefilledAt ?? now))
            allDeniedTokens = min(Self.allDenied.burst, allDeniedTokens + elapsed * Self.allDenied.perSecond)
            allDeniedRefilledAt = now
        }
        // One look-up of the program (its name is hashed once), its tally changed in place.
        let fresh = Tally(tokens: (Self.allowed.burst, Self.denied.burst), refilledAt: now, lastSeen: now)
        let write = Self.spend(&tallies[program, default: fresh], allowed: allowed, operation: operation, at: now,
                               allDeniedTokens: &allDeniedTokens, summary: { summaries.append((program, $0)) })
        return Verdict(write: write, summaries: summaries)
    }

    /// Refills `tally`'s tokens for the time since its last line and spends one for this line;
    /// counts the line instead when none is left. Hands over what was counted before a line it writes.
    private static func spend(_ tally: inout Tally, allowed: Bool, operation: String, at now: Double,
                              allDeniedTokens: inout Double, summary: (Suppressed) -> Void) -> Bool {
        let elapsed = max(0, now - tally.refilledAt)
        tally.tokens.allowed = min(Self.allowed.burst, tally.tokens.allowed + elapsed * Self.allowed.perSecond)
        tally.tokens.denied = min(Self.denied.burst, tally.tokens.denied + elapsed * Self.denied.perSecond)
        tally.refilledAt = now
        tally.lastSeen = now
        guard allowed ? tally.tokens.allowed >= 1 : tally.tokens.denied >= 1 && allDeniedTokens >= 1 else {
            tally.suppressed = tally.suppressed ?? Suppressed(since: now)
            tally.suppressed?.counts[(allowed ? "allowed " : "denied ") + operation, default: 0] += 1
            return false
        }
        if allowed {
            tally.tokens.allowed -= 1
        } else {
            tally.tokens.denied -= 1
            allDeniedTokens -= 1
        }
        if let suppressed = tally.suppressed { summary(suppressed) }
        tally.suppressed = nil
        return true
    }

    /// Every summary not yet written whose counting began at least `age` seconds before `now`
    /// (all of them with `age` 0), taken out of the budget.
    /// At most ``summariesPerFlush`` programs' summaries come one by one (the longest counting
    /// first); the others' counts are added into one for ``otherPrograms``, which comes last.
    mutating func takeSummaries(olderThan age: Double, at now: Double) -> [(Program, Suppressed)] {
        var taken: [(Program, Suppressed)] = []
        for (program, tally) in tallies {
            guard let suppressed = tally.suppressed, now - suppressed.since >= age else { continue }
            taken.append((program, suppressed))
            tallies[program]?.suppressed = nil
        }
        taken.sort { $0.1.since < $1.1.since }
        for (_, suppressed) in taken.dropFirst(Self.summariesPerFlush) { merge(suppressed, intoOthersAt: now) }
        taken = Array(taken.prefix(Self.summariesPerFlush))
        if let others, now - others.since >= age {
            taken.append((Self.otherPrograms, others))
            self.others = nil
        }
        return taken
    }

    private mutating func merge(_ suppressed: Suppressed, intoOthersAt now: Double) {
        var merged = others ?? Suppressed(since: suppressed.since)
        merged.since = min(merged.since, suppressed.since)
        merged.counts.merge(suppressed.counts, uniquingKeysWith: +)
        others = merged
    }
}
