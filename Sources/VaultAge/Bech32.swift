/// Bech32 (BIP-173) as age uses it: the BIP's checksum and character set, but no 90-character
/// limit, and the human-readable part returned in the case it was written in (`age` for recipients,
/// `AGE-SECRET-KEY-` for identities; the checksum is always over the lower-case text).
///
/// ```swift
/// let text = Bech32.encode(hrp: "age", data: publicKey)          // "age1…"
/// guard let (hrp, data) = Bech32.decode(text), hrp == "age" else { … }
/// ```
///
/// Decoded data may be a secret key: callers wipe it (``wipe(_:)``) once copied to secure memory.
enum Bech32 {
    private static let charset = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l".utf8)
    private static let values: [Int8] = {
        var table = [Int8](repeating: -1, count: 128)
        for (index, character) in charset.enumerated() { table[Int(character)] = Int8(index) }
        return table
    }()
    /// An input bound that no age key comes near; it keeps a hostile string from costing much.
    static let maximumLength = 4096

    /// Bech32 text (ASCII bytes) of `data` under `hrp`; upper case when `hrp` is.
    static func encode(hrp: String, data: UnsafeRawBufferPointer) -> [UInt8] {
        let upper = hrp.uppercased() == hrp && hrp.lowercased() != hrp
        let lowerHRP = Array(hrp.lowercased().utf8)
        var groups = regroup(data, from: 8, to: 5, pad: true)!
        defer { wipe(&groups) }
        var out = lowerHRP + [UInt8(ascii: "1")]
        out.reserveCapacity(out.count + groups.count + 6)
        for value in groups { out.append(charset[Int(value)]) }
        let check = polymod(hrp: lowerHRP, data: groups, trailingZeros: 6) ^ 1
        for index in 0..<6 { out.append(charset[Int((check >> UInt32(5 * (5 - index))) & 31)]) }
        if upper {
            for index in out.indices where out[index] >= 0x61 && out[index] <= 0x7A { out[index] -= 0x20 }
        }
        return out
    }

    /// The human-readable part and the data of `text`, or nil when it is not valid Bech32: mixed
    /// case, a bad character, a wrong checksum or non-zero padding bits.
    static func decode(_ text: UnsafeRawBufferPointer) -> (hrp: String, data: [UInt8])? {
        guard text.count <= maximumLength else { return nil }
        let hasLower = text.contains { $0 >= 0x61 && $0 <= 0x7A }
        let hasUpper = text.contains { $0 >= 0x41 && $0 <= 0x5A }
        guard !(hasLower && hasUpper) else { return nil }
        guard let separator = text.lastIndex(of: UInt8(ascii: "1")), separator >= 1, separator + 7 <= text.count else {
            return nil
        }
        let hrpBytes = Array(text[0..<separator])
        guard hrpBytes.allSatisfy({ (33...126).contains($0) }) else { return nil }
        var groups: [UInt8] = []
        defer { wipe(&groups) }
        for character in text[(separator + 1)...] {
            let lower = character >= 0x41 && character <= 0x5A ? character + 0x20 : character
            guard lower < 128, values[Int(lower)] >= 0 else { return nil }
            groups.append(UInt8(values[Int(lower)]))
        }
        let lowerHRP = hrpBytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }
        guard polymod(hrp: lowerHRP, data: groups, trailingZeros: 0) == 1 else { return nil }
        guard let data = regroup(groups.dropLast(6), from: 5, to: 8, pad: false) else { return nil }
        return (String(decoding: hrpBytes, as: UTF8.self), data)
    }

    /// BIP-173's checksum state over the expanded `hrp`, then `data`, then `trailingZeros` zeros,
    /// fed one value at a time so no secret data is copied into a concatenation.
    private static func polymod(hrp: [UInt8], data: [UInt8], trailingZeros: Int) -> UInt32 {
        let generator: [UInt32] = [0x3B6A_57B2, 0x2650_8E6D, 0x1EA1_19FA, 0x3D42_33DD, 0x2A14_62B3]
        var check: UInt32 = 1
        func step(_ value: UInt8) {
            let top = check >> 25
            check = (check & 0x1FF_FFFF) << 5 ^ UInt32(value)
            for bit in 0..<5 where (top >> UInt32(bit)) & 1 == 1 { check ^= generator[bit] }
        }
        for character in hrp { step(character >> 5) }
        step(0)
        for character in hrp { step(character & 31) }
        for value in data { step(value) }
        for _ in 0..<trailingZeros { step(0) }
        return check
    }

    /// Regroups bits (BIP-173 `convertbits`); nil when decoding leaves non-zero or too many padding bits.
    private static func regroup<Input: Sequence<UInt8>>(_ input: Input, from: Int, to: Int, pad: Bool) -> [UInt8]? {
        var accumulator: UInt32 = 0
        var bits = 0
        var out: [UInt8] = []
        let mask: UInt32 = (1 << UInt32(to)) - 1
        for value in input {
            accumulator = accumulator << UInt32(from) | UInt32(value)
            bits += from
            while bits >= to {
                bits -= to
                out.append(UInt8((accumulator >> UInt32(bits)) & mask))
            }
            accumulator &= (1 << UInt32(bits)) - 1
        }
        if pad {
            if bits > 0 { out.append(UInt8((accumulator << UInt32(to - bits)) & mask)) }
        } else if bits >= from || accumulator != 0 {
            wipe(&out)
            return nil
        }
        accumulator = 0
        return out
    }
}
