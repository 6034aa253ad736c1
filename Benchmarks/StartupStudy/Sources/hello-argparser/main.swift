import ArgumentParser

// A root command with one subcommand, parsed as `sortedvault retrieve SERVICE ACCOUNT` is.
struct Tool: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "tool", subcommands: [Retrieve.self, Store.self])
}
struct Retrieve: ParsableCommand {
    @Argument var service: String
    @Argument var account: String
    @Flag var noAutostart = false
    func run() { print("retrieve \(service) \(account)") }
}
struct Store: ParsableCommand {
    @Argument var service: String
    @Argument var account: String
    @Option var label: String?
    func run() { print("store \(service) \(account)") }
}
Tool.main()
