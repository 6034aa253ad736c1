import ArgumentParser

// The same commands as hello-argparser, but `retrieve SERVICE ACCOUNT` is recognised by hand before
// ArgumentParser runs: the library is linked (the binary carries it) but the hot path never calls it.
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
let arguments = CommandLine.arguments
if arguments.count == 4, arguments[1] == "retrieve" {
    print("retrieve \(arguments[2]) \(arguments[3])")
} else {
    Tool.main()
}
