import CLICore

/// The commands the lean front answers itself, recognised by hand: `retrieve`, `store`, `delete`,
/// `session autologin` and `status` (without `--json`), with the options the full command tree gives them. Anything else, or
/// anything here it is not sure of (help, an unknown or repeated option, a name that is not plain
/// ASCII, a label the vault would refuse), is nil: the caller then hands the unchanged argv to
/// `sortedvault-cli`, whose ArgumentParser tree prints the same help, usage errors and messages as
/// before. Being unsure costs a hand-over, never a different answer.
struct HotCommand: Equatable {
    enum Verb: Equatable { case retrieve, store, delete, autoLogin, status }

    var verb: Verb
    var service = ""
    var account = ""
    /// `--socket`, `--data-dir`, `--key-file`, `--policy-dir`.
    var location = CLILocation()
    var noAutostart = false
    var label: String?
    /// Distinct names in first-seen order; a repeated name keeps its last value (as a dictionary).
    var attributes: [(String, String)] = []
    var expiresIn: Double?

    static func == (lhs: HotCommand, rhs: HotCommand) -> Bool {
        lhs.verb == rhs.verb && lhs.service == rhs.service && lhs.account == rhs.account && lhs.location == rhs.location
            && lhs.noAutostart == rhs.noAutostart
            && lhs.label == rhs.label && lhs.expiresIn == rhs.expiresIn
            && lhs.attributes.elementsEqual(rhs.attributes) { $0 == $1 }
    }

    /// The options that name a path, each with the member of ``location`` it sets.
    static let locationOptions: [String: WritableKeyPath<CLILocation, String?> & Sendable] = [
        "--socket": \.socket,
        "--data-dir": \.dataDirectory,
        "--key-file": \.keyFile,
        "--policy-dir": \.policyDirectory,
    ]

    /// `arguments` without the program name.
    static func parse(_ arguments: [String]) -> HotCommand? {
        var rest = arguments[...]
        guard let verb = verb(&rest) else { return nil }
        var command = HotCommand(verb: verb)
        var positionals: [String] = []
        var seen: Set<String> = []
        var onlyPositionals = false
        while let argument = rest.popFirst() {
            if onlyPositionals || !argument.hasPrefix("-") {
                positionals.append(argument)
                continue
            }
            if argument == "--" { onlyPositionals = true; continue }
            // --name VALUE or --name=VALUE
            let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            func value() -> String? {
                let text = parts.count == 2 ? String(parts[1]) : rest.popFirst()
                guard let text, !text.isEmpty, !text.hasPrefix("-") else { return nil }
                return text
            }
            if name != "--attribute" {
                guard !seen.contains(name) else { return nil }  // let ArgumentParser decide what a repeat means
                seen.insert(name)
            }
            if let location = locationOptions[name] {
                guard let path = value() else { return nil }
                command.location[keyPath: location] = path
                continue
            }
            guard command.take(name, bare: parts.count == 1, value) else { return nil }
        }
        if verb == .status { return positionals.isEmpty ? command : nil }
        guard positionals.count == 2, positionals.allSatisfy({ isPlainText($0, maxBytes: 512, allowEmpty: false) }) else {
            return nil
        }
        command.service = positionals[0]
        command.account = positionals[1]
        return command
    }

    /// The verb the arguments begin with, taken from them; nil for a command of the full CLI.
    private static func verb(_ rest: inout ArraySlice<String>) -> Verb? {
        switch rest.popFirst() {
        case "retrieve": .retrieve
        case "store": .store
        case "delete": .delete
        case "status": .status
        case "session": rest.popFirst() == "autologin" ? .autoLogin : nil
        default: nil
        }
    }

    /// Takes option `name` (`bare`: written without `=VALUE`) when it is one of the verb's own and
    /// its value is plain; false for anything else, which ArgumentParser then decides.
    private mutating func take(_ name: String, bare: Bool, _ value: () -> String?) -> Bool {
        switch name {
        case "--no-autostart":
            guard bare else { return false }
            noAutostart = true
        case "--label" where verb == .store:
            guard let text = value(), Self.isPlainText(text, maxBytes: 1024, allowEmpty: true) else { return false }
            label = text
        case "--attribute" where verb == .store:
            guard let pair = value(), let equals = pair.utf8.firstIndex(of: UInt8(ascii: "=")) else { return false }
            let attributeName = String(pair[..<equals]), attributeValue = String(pair[pair.index(after: equals)...])
            guard Self.isPlainText(attributeName, maxBytes: 128, allowEmpty: false),
                  Self.isPlainText(attributeValue, maxBytes: 1024, allowEmpty: true) else { return false }
            attributes.removeAll { $0.0 == attributeName }
            attributes.append((attributeName, attributeValue))
            return attributes.count <= 32
        case "--expires-in" where verb == .store:
            guard let text = value(), let seconds = Double(text), seconds.isFinite else { return false }
            expiresIn = seconds
        default:
            return false
        }
        return true
    }

    /// Printable ASCII within `maxBytes`: text every check of the vault accepts (no control
    /// characters, already in NFC). Other text goes to the full CLI, which checks it exactly.
    static func isPlainText(_ text: String, maxBytes: Int, allowEmpty: Bool) -> Bool {
        let utf8 = text.utf8
        return (allowEmpty || !utf8.isEmpty) && utf8.count <= maxBytes && utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
    }
}
