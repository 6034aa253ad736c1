/// A shell-style pattern for service names, executables and operations.
///
/// ```swift
/// Glob("com.sorted.*").matches("com.sorted.api")   // true
/// Glob("/usr/bin/?ash").matches("/usr/bin/bash")    // true
/// ```
///
/// `*` matches any run of characters, including none and including `/` and `.`; `?` matches exactly
/// one; everything else matches itself. There are no character classes and no escapes, so a
/// pattern means the same whoever reads it. Comparison is by Unicode scalar, never by `String`
/// (canonical) equality: "é" precomposed and "e" + combining accent are different names, as they
/// are to the kernel and to the vault. Service names reach the policy only as ``VaultCore``'s
/// `ItemKey` admits them — in NFC — and for NFC text scalar equality is byte equality, so the policy,
/// the stores and the session manager decide on the same bytes. A pattern that is not itself NFC
/// (KELVIN SIGN "\u{212A}" for "K") therefore matches no name at all: it fails closed.
public struct Glob: Sendable, Hashable, CustomStringConvertible {
    /// The pattern as written in the policy file.
    public let pattern: String
    private let scalars: [Unicode.Scalar]

    public init(_ pattern: String) {
        self.pattern = pattern
        self.scalars = Array(pattern.unicodeScalars)
    }

    public var description: String { pattern }

    /// True when the pattern has no wildcard, so it matches only its own text.
    public var isLiteral: Bool { !scalars.contains("*") && !scalars.contains("?") }

    public func matches(_ text: String) -> Bool {
        let text = Array(text.unicodeScalars)
        var p = 0, t = 0
        // Where the last `*` was and how much text it has swallowed: on a mismatch, let it swallow
        // one more character. Linear backtracking to the last star is enough (no classes), so the
        // cost is O(pattern × text) at worst, never exponential.
        var star: Int? = nil, starText = 0
        while t < text.count {
            if p < scalars.count && (scalars[p] == "?" || (scalars[p] != "*" && scalars[p] == text[t])) {
                p += 1
                t += 1
            } else if p < scalars.count && scalars[p] == "*" {
                star = p
                starText = t
                p += 1
            } else if let s = star {
                p = s + 1
                starText += 1
                t = starText
            } else {
                return false
            }
        }
        while p < scalars.count && scalars[p] == "*" { p += 1 }
        return p == scalars.count
    }
}
