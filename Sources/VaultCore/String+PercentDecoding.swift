import VaultCrypto

extension StringProtocol {
    /// The text with every `%XX` turned into its byte, or nil when a `%` is not followed by two hex
    /// digits or the bytes are not UTF-8: what `removingPercentEncoding` gave, without full Foundation.
    public var percentDecoded: String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var iterator = utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next().flatMap(Hex.value), let low = iterator.next().flatMap(Hex.value) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
