import VaultCrypto
import Logging
import Synchronization
import VaultPolicy

/// The access policy in force, replaced whole by a reload (SIGHUP, `sortedvault reload`), so every
/// decision reads one consistent policy and no connection is dropped. A reload that fails (a file
/// that does not parse, an unsafe file) keeps the policy in force and remembers why, for `status`.
///
/// ```swift
/// let source = PolicySource(policy: loaded, directory: paths.policyDirectory, daemonUID: geteuid())
/// source.reload(logger: logger)  // on SIGHUP
/// ```
final class PolicySource: Sendable {
    struct State: Sendable {
        var policy: Policy
        var reloads = 0
        var error: String?
    }

    let directory: String?
    let daemonUID: UInt32
    private let state: Locked<State>

    init(policy: Policy, directory: String?, daemonUID: UInt32) {
        self.directory = directory
        self.daemonUID = daemonUID
        state = Locked(State(policy: policy))
    }

    var policy: Policy { state.withLock { $0.policy } }
    var snapshot: State { state.withLock { $0 } }

    /// The files the rules in force come from, in rule order (the built-in policy's name when none).
    var files: [String] {
        var seen: [String] = []
        for rule in policy.rules where !seen.contains(rule.reference.file) { seen.append(rule.reference.file) }
        return seen
    }

    /// Loads the directory again: the new policy replaces the old whole, or, when it cannot be
    /// loaded, the old one stays and the reason is kept. Settings are read only at start.
    func reload(logger: Logger) {
        let loaded: Result<Policy, PolicyError>
        if let directory {
            do {
                loaded = .success(try Policy.load(directory: directory, daemonUID: daemonUID))
            } catch let error as PolicyError {
                loaded = .failure(error)
            } catch {
                loaded = .failure(PolicyError(.io, file: directory, "\(error)"))
            }
        } else {
            loaded = .success(Policy.builtInDefault(daemonUID: daemonUID))
        }
        state.withLock { state in
            state.reloads += 1
            switch loaded {
            case .success(let policy):
                state.policy = policy
                state.error = nil
            case .failure(let error):
                state.error = "\(error)"
            }
        }
        switch loaded {
        case .success(let policy): logger.notice("policy reloaded: \(policy.rules.count) rules from \(files.joined(separator: ", "))")
        case .failure(let error): logger.warning("policy not reloaded, the one in force stays: \(error)")
        }
    }
}
