@_spi(Benchmarks) import Varlink

/// Realistic message bodies, shaped as the daemon's `VaultService.retrieve` answers today.
enum WireSamples {
    /// The parameters of a Retrieve reply: a 1 KiB secret as base64 and the item's metadata.
    static let retrieveReply: [String: JSONValue] = {
        var secret = ""
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        for index in 0..<1368 { secret.append(alphabet[(index * 7 + 3) % 64]) }  // 1024 bytes as base64
        let item: [String: JSONValue] = [
            "service": .string("github.com"),
            "account": .string("ada@example.com"),
            "label": .string("GitHub token for ada"),
            "attributes": .object(["kind": .string("token"), "scope": .string("repo")]),
            "created": .double(1_795_000_000.25),
            "modified": .double(1_795_000_100.5),
        ]
        return ["secret": .string(secret), "item": .object(item)]
    }()
}
