/// `sortedvault --socket S status`: the options every command takes may come before the verb, as
/// with git and systemctl. ArgumentParser reads a subcommand's options only after its name, so they
/// are moved to the end (before a `--`, which ends the options).
///
/// ```swift
/// CommandLineOrder.reordered(["--socket", "S", "session", "list"])  // ["session", "list", "--socket", "S"]
/// ```
enum CommandLineOrder {
    /// Options that take a value, and flags, that ``GlobalOptions`` declares.
    static let valued: Set<String> = ["--socket", "--data-dir", "--key-file", "--policy-dir"]
    static let flags: Set<String> = ["--no-autostart"]

    /// This process's arguments (without the program), reordered.
    static let arguments = reordered(Array(CommandLine.arguments.dropFirst()))

    static func reordered(_ arguments: [String]) -> [String] {
        var moved: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            let name = String(argument.split(separator: "=", maxSplits: 1)[0])
            if flags.contains(argument) {
                moved.append(argument)
                index += 1
            } else if valued.contains(name) {
                moved.append(argument)
                if !argument.contains("=" as Character), index + 1 < arguments.count {
                    moved.append(arguments[index + 1])
                    index += 1
                }
                index += 1
            } else {
                break
            }
        }
        guard !moved.isEmpty, index < arguments.count else { return arguments }
        var rest = Array(arguments[index...])
        let end = rest.firstIndex(of: "--") ?? rest.count
        rest.insert(contentsOf: moved, at: end)
        return rest
    }
}
