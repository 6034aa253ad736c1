/// An error from reading, parsing or validating a policy or settings file.
///
/// ``description`` always starts with the file, and with the line when one line is at fault, so an
/// administrator can jump straight to it. Compare by ``code``; read ``message`` for diagnostics.
///
/// ```swift
/// do { policy = try Policy.load(directory: "/etc/sortedvault/policy", daemonUID: getuid()) }
/// catch let error as PolicyError { log.critical("\(error)") }   // "/etc/…/access.toml:7: unknown key …"
/// ```
///
/// A policy that fails to load must never be replaced by a more permissive one: keep the old
/// policy or refuse to start.
public struct PolicyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of problem, as a small extensible set.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Sendable {
            case syntax, unsupported, unknownKey, missingKey, duplicateKey, invalidValue
            case duplicateRule, tooLarge, unsafeFile, missingPolicy, io
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// Not valid TOML: unterminated string, bad escape, stray text.
        public static let syntax = Code(.syntax)
        /// Valid TOML that sortedvault deliberately does not accept (inline tables, floats, …).
        public static let unsupported = Code(.unsupported)
        /// A key that this file format does not know.
        public static let unknownKey = Code(.unknownKey)
        /// A required key is absent.
        public static let missingKey = Code(.missingKey)
        /// A key or table is defined twice.
        public static let duplicateKey = Code(.duplicateKey)
        /// A value of the wrong type or out of range: unknown operation, bad effect, negative uid.
        public static let invalidValue = Code(.invalidValue)
        /// Two rules share a name (possibly in different files).
        public static let duplicateRule = Code(.duplicateRule)
        /// A file, a line or the rule count exceeds its bound.
        public static let tooLarge = Code(.tooLarge)
        /// A symlink, a non-regular file, unsafe permissions or a foreign owner.
        public static let unsafeFile = Code(.unsafeFile)
        /// The directory holds no rule files, so default deny would lock everyone out.
        public static let missingPolicy = Code(.missingPolicy)
        /// The file system refused: missing directory, unreadable file.
        public static let io = Code(.io)

        public var description: String { value.rawValue }
    }

    public let code: Code
    /// The file at fault, as given by the caller (a path, or a name for built-in text).
    public let file: String
    /// 1-based line at fault; `nil` for problems with the whole file (permissions, size).
    public let line: Int?
    /// What is wrong and how to fix it.
    public let message: String

    public init(_ code: Code, file: String, line: Int? = nil, _ message: String) {
        self.code = code
        self.file = file
        self.line = line
        self.message = message
    }

    /// `"<file>:<line>: <message>"`, or `"<file>: <message>"` for file-level problems.
    public var description: String {
        if let line { return "\(file):\(line): \(message)" }
        return "\(file): \(message)"
    }
}
