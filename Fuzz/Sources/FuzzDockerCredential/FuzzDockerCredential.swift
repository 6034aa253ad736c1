@_spi(Fuzzing) import CredentialHelpers
import BoundedJSON
import FuzzSupport
import VaultCrypto

/// docker's credential-helper input: the JSON `store` reads and the server URL `get` and `erase`
/// read. Contract: no crash; a server URL is never empty, holds no line break, and reads back as
/// itself (what `get` is sent is what `store` was given); and every login `store` accepts goes
/// through docker's whole protocol against a store in memory (``DockerRoundTrip``): `list` names it,
/// `get` gives back its URL, user and secret in one line of Go-encoded JSON, a new user replaces
/// it, and `erase` leaves nothing.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDockerCredential(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = SecureBytes(copying: bytes(data, size))
    if let fields = try? DockerCredentialStore.credentialFields(input) {
        if let secret = fields.secret { require(secret.count <= size, "the secret is longer than the input") }
        if let url = fields.serverURL { require(url.utf8.count <= size, "the server URL is longer than the input") }
        // An object naming a field twice (in two cases) is left out: which one the helper takes is
        // not part of this contract.
        if let url = fields.serverURL, let username = fields.username, namesEachFieldOnce(input) {
            DockerRoundTrip(input: input, serverURL: url, username: username,
                            secret: fields.secret.map { $0.withUnsafeBytes { Array($0) } } ?? []).check()
        }
    }
    if let url = try? DockerCredentialStore.serverURL(input) {
        require(!url.isEmpty, "an empty server URL was accepted")
        require(!url.contains("\n") && !url.contains("\r"), "the server URL holds a line break")
        let again = try? DockerCredentialStore.serverURL(SecureBytes(copying: Array((url + "\n").utf8)))
        require(again == url, "the server URL read back as \(String(describing: again)), not as itself")
    }
    return 0
}

/// Whether the input's object has at most one key per field docker sends (names compared as Go
/// does, ignoring case).
func namesEachFieldOnce(_ input: SecureBytes) -> Bool {
    guard let object = (try? input.withUnsafeBytes { try JSONValue.parse($0, maxDepth: 4) })?.objectValue else { return false }
    let fields = object.keys.map { $0.lowercased() }.filter { ["serverurl", "username", "secret"].contains($0) }
    return Set(fields).count == fields.count
}
