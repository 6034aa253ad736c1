import CredentialHelpers
import FuzzSupport
import VaultCrypto

/// git's credential-helper input (`GitCredentialMessage.parse`). Contract: no crash, nothing over
/// the size limit accepted, and no accepted field but the password holds a control character (the
/// CVE-2020-5260 class: a newline smuggled into a host forges a second credential request); the
/// password holds neither NUL nor CR.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGitCredential(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = SecureBytes(copying: bytes(data, size))
    guard let message = try? GitCredentialMessage.parse(input) else { return 0 }
    require(size <= GitCredentialMessage.maximumBytes, "input over the size limit was accepted")
    for (name, field) in [("protocol", message.protocolName), ("host", message.host), ("path", message.path), ("username", message.username)] {
        guard let field else { continue }
        require(!field.unicodeScalars.contains { $0.properties.generalCategory == .control }, "\(name) holds a control character")
    }
    if let password = message.password {
        password.withUnsafeBytes { raw in
            require(!raw.contains(0) && !raw.contains(0x0D), "the password holds a NUL or CR")
            require(!raw.contains(0x0A), "the password holds a newline")
        }
    }
    return 0
}
