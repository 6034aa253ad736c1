import FuzzSupport
import VaultPolicy

/// The TOML readers of the access policy (`Policy.parse`) and the daemon settings
/// (`DaemonSettings.parse`). Contract: no crash; a parsed policy keeps to its rule limit and decides
/// by its rules (``PolicyProperties``: deny wins over allow, default deny, the same decision every
/// time); parsed settings are the built-in ones where the text sets nothing.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPolicy(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let (selector, rest) = split(data, size)
    let text = String(decoding: rest, as: UTF8.self)
    if selector & 1 == 0 {
        PolicyProperties.checkEmptyPolicyOnce()
        guard let policy = try? Policy.parse(text, file: "fuzz.toml", daemonUID: PolicyProperties.daemonUID) else { return 0 }
        require(policy.rules.count <= Policy.maxRules, "a policy over the rule limit was accepted")
        PolicyProperties(text: text, policy: policy).check()
    } else {
        guard let settings = try? DaemonSettings.parse(text, file: "daemon.toml") else { return 0 }
        if text.allSatisfy({ $0.isWhitespace }) {
            require(settings == DaemonSettings.builtInDefault, "empty settings differ from the built-in ones")
        }
    }
    return 0
}
