/// The header of an age v1 file: the version line, one or more recipient stanzas, and the MAC line.
///
/// ```
/// age-encryption.org/v1
/// -> X25519 XEl0dJ6y3C7KZkgmgWUicg63EyXJiwBJW8PdYJ/cYBE
/// qRS0AMjdjPvZ/WT08U2KL4G+PIooA3hy38SvLpvaC1E
/// --- HK2NmOBN9Dpq0Gw6xMCuhFcQlQLvZ/wQUi/2scLG75s
/// ```
///
/// The MAC covers the header bytes through the `---` mark. The parser (``AgeHeader/parse(_:)``)
/// accepts exactly the grammar of the spec, so the bytes it read are the bytes re-encoding gives.
struct AgeHeader: Sendable {
    static let versionLine = Array("age-encryption.org/v1".utf8)
    static let versionPrefix = Array("age-encryption.org/".utf8)
    static let macPrefix = Array("---".utf8)

    var stanzas: [AgeStanza]
    /// HMAC-SHA-256 of ``macInput``, 32 bytes.
    var mac: [UInt8]
    /// The header from its first byte through `---`: what the MAC covers.
    var macInput: [UInt8]
    /// Where the payload begins in the file.
    var payloadOffset: Int

    /// Bounds on what the parser reads before it gives up: generous for age files (a stanza per
    /// recipient, a few lines each) and small enough that a hostile header costs little.
    enum Limits {
        static let maximumStanzas = 256
        static let maximumArgumentLineLength = 4096
        static let maximumHeaderLength = 256 * 1024
    }

    /// The header text through `---`, given the stanzas: for sealing, before the MAC is known.
    static func macInput(for stanzas: [AgeStanza]) -> [UInt8] {
        var out = versionLine + [0x0A]
        for stanza in stanzas { out += stanza.encoded() }
        return out + macPrefix
    }

    /// The whole header with its MAC line.
    static func encode(macInput: [UInt8], mac: [UInt8]) -> [UInt8] {
        macInput + [0x20] + AgeBase64.encode(mac) + [0x0A]
    }
}
