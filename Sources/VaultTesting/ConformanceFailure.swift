import FoundationEssentials
import VaultCore

/// A broken promise of the `TokenStore` contract, thrown by a conformance case.
public struct ConformanceFailure: Error, CustomStringConvertible {
    public let message: String
    public let line: UInt

    public var description: String { "conformance line \(line): \(message)" }
}

/// Throws a ``ConformanceFailure`` unless `condition` holds.
func require(_ condition: Bool, _ message: @autoclosure () -> String, line: UInt = #line) throws {
    if !condition { throw ConformanceFailure(message: message(), line: line) }
}

/// Runs `body` and requires that it throws a `VaultError` with `code`.
func requireError<T>(_ code: VaultError.Code, line: UInt = #line, _ body: () async throws -> T) async throws {
    do {
        _ = try await body()
    } catch let error as VaultError {
        try require(error.code == code, "expected error \(code), got \(error.code): \(error.reason)", line: line)
        return
    } catch {
        throw ConformanceFailure(message: "expected error \(code), got \(error)", line: line)
    }
    throw ConformanceFailure(message: "expected error \(code), but the call succeeded", line: line)
}

/// Whether two instants agree to the millisecond: a backend that carries times over a wire or in a
/// keyring (seconds since 1970 as a double or a string) may not round-trip the last bit of a `Date`.
func sameInstant(_ a: Date, _ b: Date) -> Bool {
    abs(a.timeIntervalSince(b)) < 0.001
}
