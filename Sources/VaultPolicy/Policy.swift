/// Who may do what: the compiled rules of the daemon's policy files, and the decision procedure.
///
/// ```swift
/// let policy = try Policy.load(directory: "/etc/sortedvault/policy", daemonUID: getuid())
/// let decision = policy.decide(AccessRequest(peer: peer, operation: "retrieve", service: "com.sorted.api"))
/// guard decision.allowed else { … }   // decision.description says which rule decided
/// ```
///
/// Default deny: a request that no rule allows is refused. Deny wins: if any matching rule denies,
/// the request is denied, whatever allows it. Among rules of the same effect the first in file
/// order (files in sorted name order) is reported as the decider.
///
/// When loading fails, do not fall back to ``builtInDefault(daemonUID:)`` or any other policy:
/// refuse to start, or keep the policy already in force.
public struct Policy: Sendable {
    /// At most this many rules across all files, so a policy stays reviewable and decisions cheap.
    public static let maxRules = 1000

    /// The compiled rules, in file order.
    public let rules: [Rule]
    /// Whether any rule has `executables`: without one no decision depends on the executable.
    public let namesExecutables: Bool
    /// Whether any rule has `gids`: without one no decision needs a peer's supplementary groups.
    public let namesGroups: Bool

    init(rules: [Rule]) {
        self.rules = rules
        namesExecutables = rules.contains { $0.executables != nil }
        namesGroups = rules.contains { $0.gids != nil }
    }

    /// Parses one policy file's text; `file` names it in errors and in ``RuleReference``.
    ///
    /// - Throws: ``PolicyError`` naming `file` and the line at fault.
    public static func parse(_ text: String, file: String, daemonUID: UInt32) throws -> Policy {
        let root = try TOMLParser.parse(text, file: file)
        let reader = TOMLTableReader(table: root, file: file, name: "the top level")
        try reader.rejectUnknownKeys(["rule"])
        guard let entry = root["rule"] else { return Policy(rules: []) }
        guard case .arrayOfTables(let tables) = entry.node else {
            throw PolicyError(.invalidValue, file: file, line: entry.line, "'rule' must be an array of tables: write each rule under its own [[rule]] header")
        }
        var rules: [Rule] = []
        for table in tables {
            let rule = try Rule(TOMLTableReader(table: table, file: file, name: "[[rule]]"), daemonUID: daemonUID)
            try append(rule, to: &rules)
        }
        return Policy(rules: rules)
    }

    /// Adds `rule`, enforcing unique names and ``maxRules``.
    static func append(_ rule: Rule, to rules: inout [Rule]) throws {
        let reference = rule.reference
        if let first = rules.first(where: { $0.name == rule.name }) {
            throw PolicyError(.duplicateRule, file: reference.file, line: reference.line,
                              "rule name '\(rule.name)' is already used at \(first.reference.file):\(first.reference.line); give each rule a unique name")
        }
        if rules.count >= maxRules {
            throw PolicyError(.tooLarge, file: reference.file, line: reference.line,
                              "more than \(maxRules) rules; merge rules using globs in services and lists of uids")
        }
        rules.append(rule)
    }

    /// Decides `request`: deny wins, then allow, then default deny.
    public func decide(_ request: AccessRequest) -> Decision {
        let depends = dependsOnExecutable(request)
        var firstAllow: Rule?
        for rule in rules where rule.matches(request) {
            switch rule.effect {
            case .deny: return Decision(allowed: false, rule: rule.reference, dependsOnExecutable: depends)
            case .allow: if firstAllow == nil { firstAllow = rule }
            }
        }
        if let firstAllow { return Decision(allowed: true, rule: firstAllow.reference, dependsOnExecutable: depends) }
        return Decision(allowed: false, rule: nil, dependsOnExecutable: depends)
    }

    /// Whether a rule with `executables` matches, or would match with another executable, the
    /// request's uid, groups, operation and service (any service for a request without one, whose
    /// entries may be checked one by one).
    func dependsOnExecutable(_ request: AccessRequest) -> Bool {
        guard namesExecutables else { return false }
        return rules.contains { $0.executables != nil && $0.couldMatchWithAnyExecutable(request) }
    }
}
