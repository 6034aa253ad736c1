import FuzzSupport
import VaultPolicy

/// What every parsed policy must do, checked on requests built from the policy's own uids, groups,
/// executables and service patterns (so the rules have requests to match), for every operation:
///
/// - deny wins: a request any matching rule denies is denied, by a deny rule, whatever allows it;
///   and with a rule that denies everything added after the others, everything is denied;
/// - default deny: a request no rule matches is denied by no rule; a policy without rules denies
///   everything; a rule that allows everything added after the others allows exactly what no rule
///   denied;
/// - the same decision every time: deciding again, or deciding on the text parsed again, gives it.
struct PolicyProperties {
    static let daemonUID: UInt32 = 1000
    let text: String
    let policy: Policy

    func check() {
        let requests = Self.requests(for: policy)
        let again = try? Policy.parse(text, file: "fuzz.toml", daemonUID: Self.daemonUID)
        require(again != nil, "the same text parsed once and failed the second time")
        let denyAll = appending("fuzz-deny-everything", effect: "deny")
        let allowAll = appending("fuzz-allow-everything", effect: "allow")
        for request in requests {
            let decision = policy.decide(request)
            let matching = policy.rules.filter { $0.matches(request) }
            if let deny = matching.first(where: { $0.effect == .deny }) {
                require(!decision.allowed && decision.rule == deny.reference,
                        "deny does not win: \(describe(request)) was \(decision), though rule \(deny.name) denies it")
            } else if let allow = matching.first {
                require(decision.allowed && decision.rule == allow.reference,
                        "\(describe(request)) was \(decision), though only allow rules match it, first \(allow.name)")
            } else {
                require(!decision.allowed && decision.rule == nil, "\(describe(request)) matches no rule but was \(decision)")
            }
            require(policy.decide(request) == decision, "deciding \(describe(request)) again gave another answer")
            if let again { require(again.decide(request) == decision, "the text parsed again decides \(describe(request)) otherwise") }
            if let denyAll {
                let denied = denyAll.decide(request)
                require(!denied.allowed && denied.rule != nil && denyAll.rules.contains { $0.reference == denied.rule && $0.effect == .deny },
                        "with a rule denying everything, \(describe(request)) was \(denied)")
            }
            if let allowAll {
                let allowed = allowAll.decide(request)
                let deniedByARule = !decision.allowed && decision.rule != nil
                require(allowed.allowed == !deniedByARule,
                        "with a rule allowing everything, \(describe(request)) was \(allowed); alone the policy said \(decision)")
            }
        }
        if policy.rules.isEmpty {
            require(requests.allSatisfy { policy.decide($0) == Decision(allowed: false, rule: nil) }, "a policy without rules allowed something")
        }
    }

    /// A policy of no rules, and one of comments only, deny everything (checked once per process).
    nonisolated(unsafe) private static var checkedEmpty = false
    static func checkEmptyPolicyOnce() {
        guard !checkedEmpty else { return }
        checkedEmpty = true
        for text in ["", "# nothing is allowed\n"] {
            guard let empty = parse(text) else { require(false, "an empty policy did not parse"); return }
            let peers = [PeerIdentity(uid: daemonUID, gid: daemonUID, executable: "/usr/bin/git"), PeerIdentity(uid: 0, gid: 0, groups: nil, executable: nil)]
            for peer in peers {
                for operation in Policy.knownOperations {
                    for service in [nil, "com.example.app", "*"] as [String?] {
                        let decision = empty.decide(AccessRequest(peer: peer, operation: operation, service: service))
                        require(!decision.allowed && decision.rule == nil, "an empty policy decided \(operation) on \(service ?? "nothing"): \(decision)")
                    }
                }
            }
        }
    }

    /// The policy with `name`, a rule for everything, after its own rules; nil when the text does
    /// not take one more rule (the name is taken, the limit reached, the text ends inside a value).
    func appending(_ name: String, effect: String) -> Policy? {
        guard let policy = Self.parse(text + Self.rule(name, effect: effect)),
              policy.rules.count == self.policy.rules.count + 1, policy.rules.last?.name == name else { return nil }
        return policy
    }

    static func parse(_ text: String) -> Policy? { try? Policy.parse(text, file: "fuzz.toml", daemonUID: daemonUID) }

    /// A rule for every peer, operation and service.
    static func rule(_ name: String, effect: String) -> String {
        "\n[[rule]]\nname = \"\(name)\"\neffect = \"\(effect)\"\noperations = [\"*\"]\nservices = [\"*\"]\n"
    }

    /// Peers and services the policy names (its first rules', wildcards filled in) and some it does
    /// not, with every operation; bounded, so a policy of 1,000 rules is still quick.
    static func requests(for policy: Policy) -> [AccessRequest] {
        let rules = policy.rules.prefix(6)
        var peers = [PeerIdentity(uid: daemonUID, gid: daemonUID, groups: [daemonUID], executable: "/usr/bin/git"),
                     PeerIdentity(uid: 0, gid: 0, groups: nil, executable: nil)]
        for rule in rules.prefix(3) {
            let uid = rule.uids?.min() ?? 4242
            let gid = rule.gids?.min() ?? 4242
            peers.append(PeerIdentity(uid: uid, gid: gid, groups: [gid], executable: rule.executables?.first.map { filled($0.pattern) }))
        }
        var services: [String?] = [nil, "com.example.app"]
        for rule in rules { if let pattern = rule.services.first?.pattern { services.append(filled(pattern)) } }
        var requests: [AccessRequest] = []
        for peer in peers {
            for operation in Policy.knownOperations {
                for service in services { requests.append(AccessRequest(peer: peer, operation: operation, service: service)) }
            }
        }
        return requests
    }

    /// A name the pattern matches: each wildcard replaced by one letter.
    static func filled(_ pattern: String) -> String {
        String(pattern.map { $0 == "*" || $0 == "?" ? "x" : $0 })
    }
}

func describe(_ request: AccessRequest) -> String {
    "\(request.operation) on \(request.service.map { $0.debugDescription } ?? "the vault") by uid \(request.peer.uid) (\(request.peer.executable ?? "unknown executable"))"
}
