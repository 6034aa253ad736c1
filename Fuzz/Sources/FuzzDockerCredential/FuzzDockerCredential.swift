@_spi(Fuzzing) import CredentialHelpers
import FuzzSupport
import VaultCrypto

/// docker's credential-helper input: the JSON `store` reads and the server URL `get` and `erase`
/// read. Contract: no crash; a server URL is never empty and holds no line break; fields read from
/// JSON are the strings the input holds under those names.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDockerCredential(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = SecureBytes(copying: bytes(data, size))
    if let fields = try? DockerCredentialStore.credentialFields(input) {
        if let secret = fields.secret { require(secret.count <= size, "the secret is longer than the input") }
        if let url = fields.serverURL { require(url.utf8.count <= size, "the server URL is longer than the input") }
    }
    if let url = try? DockerCredentialStore.serverURL(input) {
        require(!url.isEmpty, "an empty server URL was accepted")
        require(!url.contains("\n") && !url.contains("\r"), "the server URL holds a line break")
    }
    return 0
}
