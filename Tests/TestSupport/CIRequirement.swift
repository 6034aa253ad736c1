import Foundation

/// What a test needs of the machine, which CI must have: where `CI` is set a missing tool fails the
/// test, with the command that provides it, instead of skipping it (a green CI must mean the feature
/// was checked). Elsewhere such a test is skipped with the same text.
///
/// ```swift
/// @Suite(.enabled(if: CIRequirement.runs(where: NetworkPartition.available), NetworkPartition.missing))
/// struct FleetTLSTests {
///     init() throws { try CIRequirement.require(NetworkPartition.available, NetworkPartition.missing) }
/// }
/// ```
public enum CIRequirement {
    /// Whether this is a CI run: `CI` set to anything but empty, `0` or `false`.
    public static let isCI: Bool = {
        guard let value = ProcessInfo.processInfo.environment["CI"] else { return false }
        return !["", "0", "false"].contains(value.lowercased())
    }()

    /// Whether a test needing `available` runs here: always under CI, where it then fails through
    /// ``require(_:_:)``.
    public static func runs(where available: Bool) -> Bool { available || isCI }

    /// Throws `missing` (what is missing and the command that provides it) unless `available`.
    public static func require(_ available: Bool, _ missing: String) throws {
        guard available else { throw HarnessError("this test needs what this machine lacks: \(missing)") }
    }
}
