import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// The name rule: every service and account name is in Unicode Normalization Form C.
///
/// Why one rule, enforced where ``ItemKey`` is built: the policy's globs compare Unicode scalars,
/// the stores compare UTF-8 bytes, and Swift's `String` compares canonical equivalence. For text in
/// NFC the three agree (two different NFC strings are never canonically equivalent), so a name the
/// policy denies can never reach another name's item, login, lock or refresh. A name that NFC would
/// change ("com.\u{212A}iosk" with KELVIN SIGN, "e" + COMBINING ACUTE) is refused with
/// `invalidArgument` rather than silently normalised: normalising would make two different byte
/// strings from two clients the same login.
///
/// ```swift
/// try ItemKey(service: "caf\u{E9}", account: "ada")          // fine: precomposed é
/// try ItemKey(service: "cafe\u{301}", account: "ada")        // throws invalidArgument
/// ```
func requireNFC(_ value: String, what: String) throws {
    // ASCII is always NFC: the common case costs one pass over the bytes.
    if value.utf8.allSatisfy({ $0 < 0x80 }) { return }
    // The standard library's own NFC (the one String hashing uses): no ICU in the program.
    let normalized = String(decoding: value._nfcCodeUnits, as: UTF8.self)
    // Compare bytes: `==` on String would call the two equal, which is the very confusion refused here.
    if !normalized.utf8.elementsEqual(value.utf8) {
        throw VaultError.invalidArgument(
            "\(what) \(value.debugDescription) is not in Unicode normalization form C (NFC): it has characters that have a "
            + "canonical precomposed form, such as KELVIN SIGN for K or a letter followed by a combining accent; "
            + "send the name NFC-normalized, e.g. \(normalized.debugDescription)")
    }
}
