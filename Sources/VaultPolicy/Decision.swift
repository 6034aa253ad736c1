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

    public init(allowed: Bool, rule: RuleReference?) {
        self.allowed = allowed
        self.rule = rule
    }

    /// Refused because no rule matched.
    public static let defaultDeny = Decision(allowed: false, rule: nil)

    public var description: String {
        guard let rule else { return "denied: no rule matches (default deny)" }
        return "\(allowed ? "allowed" : "denied") by rule \(rule)"
    }
}
