/// Where a rule was written: enough to find it and to log which rule decided.
public struct RuleReference: Sendable, Hashable, CustomStringConvertible {
    public let name: String
    /// The file as given to ``Policy/parse(_:file:daemonUID:)`` or found by ``Policy/load(directory:daemonUID:)``.
    public let file: String
    /// The line of the rule's `[[rule]]` header.
    public let line: Int

    public init(name: String, file: String, line: Int) {
        self.name = name
        self.file = file
        self.line = line
    }

    /// `"owner-full-access (access.toml:2)"`
    public var description: String { "\(name) (\(file):\(line))" }
}
