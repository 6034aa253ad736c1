import CLICore

/// Replaces this process with `sortedvault-cli` (the full ArgumentParser command tree, installed
/// next to this binary) with the same arguments, environment and descriptors, so every command the
/// lean front does not answer itself behaves exactly as before. Called only before anything was
/// sent that changes the vault (a store is never sent twice) and before standard input was read.
enum HandOver {
    static func toFullCLI() -> Never {
        StandardStreams.exit(with: Sibling.exec("sortedvault-cli", Array(CommandLine.arguments.dropFirst())))
    }
}
