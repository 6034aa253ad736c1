/// Text from outside — a program's path, a service name, a provider's message — made safe to write
/// into a line-oriented log and to show on a terminal: it can neither end the line (and forge the
/// next one) nor steer the terminal or the reading direction.
///
/// ```swift
/// LogText.quoted("/tmp/evil\n2026-… allowed")   // "\"/tmp/evil\\n2026-… allowed\""
/// ```
///
/// Escaped, as `\u{XXXX}` (`\n`, `\r`, `\t`, `\0` for those four): C0 controls and DEL, C1 controls (NEL,
/// CSI…), and the Unicode characters of categories Cf, Zl, Zp, Co and Cn (bidirectional overrides
/// and isolates, zero-width characters, line and paragraph separators, private use, unassigned).
/// A backslash is doubled, so the escaping is reversible. Everything else, letters of any script
/// included, stays as it is.
public enum LogText {
    /// `text` with every unsafe character escaped (see above).
    public static func escaped(_ text: String, alsoEscaping quote: Unicode.Scalar? = nil) -> String {
        if text.unicodeScalars.allSatisfy({ !needsEscape($0) && $0 != quote }) { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar == "\\" || scalar == quote {
                out.append("\\")
                out.append(scalar)
            } else if needsEscape(scalar) {
                switch scalar {
                case "\n": out.append(contentsOf: "\\n".unicodeScalars)
                case "\r": out.append(contentsOf: "\\r".unicodeScalars)
                case "\t": out.append(contentsOf: "\\t".unicodeScalars)
                case "\0": out.append(contentsOf: "\\0".unicodeScalars)
                default: out.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
                }
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// `text` escaped and between double quotes (a `"` inside is escaped too): one log field.
    public static func quoted(_ text: String) -> String {
        "\"" + escaped(text, alsoEscaping: "\"") + "\""
    }

    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if value < 0x20 || value == 0x7F || (0x80...0x9F).contains(value) { return true }
        if value < 0x80 { return scalar == "\\" }
        switch scalar.properties.generalCategory {
        case .format, .lineSeparator, .paragraphSeparator, .privateUse, .unassigned, .surrogate, .control: return true
        default: return false
        }
    }
}
