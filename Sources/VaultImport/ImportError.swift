/// Why a file could not be read, parsed or rewritten. Compare by ``code``; ``reason`` is for people
/// and names the file and line, never a secret or the text around one.
///
/// ```swift
/// do { _ = try NetrcFile.parse(bytes, path: path) }
/// catch let error as ImportError where error.code == .malformed { print(error) }
/// ```
public struct ImportError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case tooLarge = "too large"
            case tooManyEntries = "too many entries"
            case malformed
            case notRegularFile = "not a regular file"
            case changedSinceScan = "changed since it was read"
            case system = "system call failed"
        }
        private let base: Base

        /// The file is over ``ImportLimits/maximumFileBytes``.
        public static let tooLarge = Code(base: .tooLarge)
        /// The file holds more than ``ImportLimits/maximumEntries`` credentials or sections.
        public static let tooManyEntries = Code(base: .tooManyEntries)
        /// The file is not in the format its tool writes.
        public static let malformed = Code(base: .malformed)
        /// The path names a directory, device or other non-file.
        public static let notRegularFile = Code(base: .notRegularFile)
        /// The replacer found other bytes in the file than those the credentials were found in.
        public static let changedSinceScan = Code(base: .changedSinceScan)
        /// open, write, fsync, rename or another call failed; the reason names it and errno.
        public static let system = Code(base: .system)

        public var description: String { base.rawValue }
    }

    public let code: Code
    /// What went wrong, for people: the file, the line or byte, the call; never a secret.
    public let reason: String

    init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { reason }
}

/// The bounds every parser keeps: input from a home directory is still outside input.
public enum ImportLimits {
    /// The largest file read: credential files are a few KiB; anything this big is not one.
    public static let maximumFileBytes = 1 << 20
    /// The most credentials (or sections, machines, hosts) one file may hold.
    public static let maximumEntries = 4096
    /// The deepest JSON nesting read in docker's config.
    public static let maximumJSONDepth = 32
}
