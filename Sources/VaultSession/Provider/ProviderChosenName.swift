import VaultCore

/// Names a provider chooses — an OIDC `sub`, a verified e-mail, a provider's user id — and the
/// rule they pass before they become an account name, a login's user id, or a line on a terminal.
///
/// ```swift
/// try ProviderChosenName.check(subject, what: "the id token's `sub`")   // U+202E: refused
/// ```
///
/// Why stricter than a user-given name (``ItemKey/checkName(_:what:)``, which refuses only control
/// characters): the user sees what they type, but nobody sees what a provider sends before it is
/// stored and printed. A right-to-left override (U+202E), a line or paragraph separator (U+2028,
/// U+2029), another format character (Cf: zero-width joiners, bidirectional marks), a private-use or
/// unassigned code point would make `session list` and the logs show another name than the one
/// stored. Such a name is refused, never stored or printed raw; the error shows it escaped.
enum ProviderChosenName {
    /// Throws `.providerRejected` when `name` holds a character a terminal would not show as itself.
    static func check(_ name: String, what: String) throws {
        guard name.unicodeScalars.contains(where: isHidden) else { return }
        throw VaultError(.providerRejected, "\(what) the provider sent, \(escaped(name)), holds control, format or separator characters (such as U+202E or U+2028) that would show another name than the one stored: nothing was stored; ask the provider's administrator to fix the user's name")
    }

    /// Whether `name` holds a character ``check(_:what:)`` refuses.
    static func isHiddenName(_ name: String) -> Bool { name.unicodeScalars.contains(where: isHidden) }

    /// Whether a scalar is one a terminal does not show as itself: Cc, Cf, Zl, Zp, Co, Cn.
    static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .unassigned, .surrogate: return true
        default: return false
        }
    }

    /// The name quoted for an error: printable ASCII as itself, everything else as `\u{…}`, cut to 64 scalars.
    static func escaped(_ name: String) -> String {
        var text = "\""
        for scalar in name.unicodeScalars.prefix(64) {
            if scalar.value >= 0x20 && scalar.value < 0x7F && scalar != "\"" && scalar != "\\" {
                text.unicodeScalars.append(scalar)
            } else {
                text += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
        }
        return text + (name.unicodeScalars.count > 64 ? "…\"" : "\"")
    }
}
