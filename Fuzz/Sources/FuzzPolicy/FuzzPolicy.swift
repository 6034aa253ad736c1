import FuzzSupport
import VaultPolicy

/// The TOML readers of the access policy (`Policy.parse`) and the daemon settings
/// (`DaemonSettings.parse`). Contract: no crash; a parsed policy keeps to its rule limit and can
/// decide a request; parsed settings are the built-in ones where the text sets nothing.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPolicy(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let (selector, rest) = split(data, size)
    let text = String(decoding: rest, as: UTF8.self)
    if selector & 1 == 0 {
        guard let policy = try? Policy.parse(text, file: "fuzz.toml", daemonUID: 1000) else { return 0 }
        require(policy.rules.count <= Policy.maxRules, "a policy over the rule limit was accepted")
        let peer = PeerIdentity(uid: 1000, gid: 1000, groups: [1000], executable: "/usr/bin/git")
        for operation in Policy.knownOperations {
            _ = policy.decide(AccessRequest(peer: peer, operation: operation, service: "com.example.app"))
            _ = policy.decide(AccessRequest(peer: peer, operation: operation, service: nil))
        }
    } else {
        guard let settings = try? DaemonSettings.parse(text, file: "daemon.toml") else { return 0 }
        if text.allSatisfy({ $0.isWhitespace }) {
            require(settings == DaemonSettings.builtInDefault, "empty settings differ from the built-in ones")
        }
    }
    return 0
}
