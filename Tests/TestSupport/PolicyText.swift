/// Access policies the tests write, as text for ``CLIHarness/writePolicy(access:settings:)``.
public enum PolicyText {
    /// The CLI's two programs may do everything; `program` (by its executable's path) may do only
    /// `operations` on `services`; nobody else anything.
    public static func ownerCLIAnd(_ program: String, operations: [String], services: [String]) -> String {
        func list(_ values: [String]) -> String { "[" + values.map { "\"\($0)\"" }.joined(separator: ", ") + "]" }
        return """
            [[rule]]
            name = "owner"
            effect = "allow"
            uids = ["@self"]
            executables = \(list([CLIHarness.executable, CLIHarness.executable + "-cli"]))
            operations = ["*"]
            services = ["*"]

            [[rule]]
            name = "app"
            effect = "allow"
            uids = ["@self"]
            executables = \(list([program]))
            operations = \(list(operations))
            services = \(list(services))

            """
    }
}
