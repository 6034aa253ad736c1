import Foundation
import Testing
import VaultCrypto

#if canImport(Glibc)
import Glibc
#endif

/// One CCTV age test vector: its `key: value` header and the age file after the empty line,
/// inflated when `compressed: zlib`.
struct AgeVector {
    let name: String
    let expect: String
    let payloadHash: String?
    let identities: [String]
    let passphrases: [String]
    let armored: Bool
    let file: [UInt8]

    static let folder = Bundle.module.url(forResource: "Vectors", withExtension: nil)

    /// The vector names in `Vectors/`, sorted; empty when the folder is missing (a test checks the count).
    static let names: [String] = {
        guard let folder, let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return [] }
        return names.filter { !$0.hasSuffix(".md") }.sorted()
    }()

    init(named name: String) throws {
        let url = try #require(Self.folder).appendingPathComponent(name)
        let bytes = Array(try Data(contentsOf: url))
        let separator = try #require(bytes.indices.first { bytes[$0] == 0x0A && $0 + 1 < bytes.count && bytes[$0 + 1] == 0x0A })
        var fields: [(String, String)] = []
        for line in String(decoding: bytes[..<separator], as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            fields.append((String(parts[0]), parts.count > 1 ? String(parts[1].dropFirst()) : ""))
        }
        func values(_ key: String) -> [String] { fields.filter { $0.0 == key }.map(\.1) }
        self.name = name
        expect = try #require(values("expect").first)
        payloadHash = values("payload").first
        identities = values("identity")
        passphrases = values("passphrase")
        armored = values("armored").first == "yes"
        let body = Array(bytes[(separator + 2)...])
        file = values("compressed").first == "zlib" ? try Zlib.inflate(body) : body
    }
}

/// zlib's `uncompress`, from the system's libz (present on every Debian), for the compressed vectors.
enum Zlib {
    private typealias Uncompress = @convention(c) (UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt>?,
                                                   UnsafePointer<UInt8>?, UInt) -> Int32

    static func inflate(_ input: [UInt8]) throws -> [UInt8] {
        guard let library = dlopen("libz.so.1", RTLD_NOW), let symbol = dlsym(library, "uncompress") else {
            throw VectorError("libz.so.1 is needed to inflate the compressed vectors")
        }
        let uncompress = unsafeBitCast(symbol, to: Uncompress.self)
        var capacity = max(1024, input.count * 8)
        while capacity <= 256 << 20 {
            var output = [UInt8](repeating: 0, count: capacity)
            var length = UInt(capacity)
            let status = uncompress(&output, &length, input, UInt(input.count))
            if status == 0 { return Array(output[0..<Int(length)]) }
            guard status == -5 else { throw VectorError("zlib uncompress failed with \(status)") }  // Z_BUF_ERROR: grow
            capacity *= 4
        }
        throw VectorError("a compressed vector inflates to more than 256 MiB")
    }
}

struct VectorError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension Collection where Element == UInt8 {
    /// Lower-case hex of the SHA-256 of the bytes.
    var sha256Hex: String {
        SecureBytes(copying: self).sha256().withUnsafeBytes { $0.map { String(format: "%02x", $0) }.joined() }
    }
}
