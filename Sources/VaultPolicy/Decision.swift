/// The outcome of ``Policy/decide(_:)`` and the rule that decided it.
///
/// ```swift
/// let decision = policy.decide(request)
/// log.info("\(decision)")   // "allowed by rule owner-full-access (access.toml:2)"
/// ```
///
/// Log the decision, not the request's service, when service names are sensitive.
public struct Decision: Sendable, Equatable, CustomStringConvertible {
    public let allowed: Bool
    /// The deciding rule; `nil` when no rule matched and default deny applied.
    public let rule: RuleReference?
    /// Whether a rule with `executables` could decide this call for this peer (whatever the
    /// executable): only then can a change of the peer's executable change the answer, so only then
    /// must the caller check that the peer still runs the executable the decision was made on.
    public let dependsOnExecutable: Bool

    public init(allowed: Bool, rule: RuleReference?, dependsOnExecutable: Bool = false) {
        self.allowed = allowed
        self.rule = rule
        self.dependsOnExecutable = dependsOnExecutable
    }

    /// Refused because no rule matched.
    public static let defaultDeny = Decision(allowed: false, rule: nil)

    public var description: String {
        guard let rule else { return "denied: no rule matches (default deny)" }
        return "\(allowed ? "allowed" : "denied") by rule \(rule)"
    }
}
