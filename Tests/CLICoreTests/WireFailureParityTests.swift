import BoundedJSON
import CLIOptions
import Testing
import Varlink
import VaultCore
import VaultClient
@testable import CLICore

/// Both clients read error replies through `ErrorReply`, each in its own codes (the
/// lean CLI in exit statuses, the full client in `VaultError.Code`s); these tests hold the lean
/// CLI's texts and exit statuses to those of `VaultWireError.decode` and `SessionWireError.decode`.
@Suite(.timeLimit(.minutes(20))) struct WireFailureParityTests {
    static let parameterSets: [[String: JSONValue]] = [
        [:],
        ["service": "svc \"q\"", "account": "ada", "reason": "a reason", "operation": "retrieve", "parameter": "service",
         "retryAfterSeconds": 2.2],
    ]

    static let vaultNames = ["NotFound", "Locked", "PermissionDenied", "InvalidParameter", "WrongPassphrase", "TooManyAttempts",
                             "IntegrityFailure", "StorageFailure", "Unsupported", "SomethingNew"].map { "org.sortedvault.vault." + $0 }
        + ["org.varlink.service.PermissionDenied", "org.varlink.service.InvalidParameter", "org.varlink.service.MethodNotFound"]

    static let sessionNames = ["NoSession", "Locked", "PermissionDenied", "InvalidParameter", "ProviderRejected",
                               "IntegrityFailure", "StorageFailure", "Unsupported"].map { "org.sortedvault.session." + $0 } + vaultNames

    @Test(arguments: vaultNames)
    func aVaultErrorReplyReadsAsTheFullClientReadsIt(name: String) {
        for parameters in Self.parameterSets {
            let expected = VaultWireError.decode(name, parameters)
            let lean = WireFailure.vault(name, parameters)
            #expect(lean.message == expected.reason, "\(name) \(parameters)")
            #expect(lean.status == ExitStatus(expected.code), "\(name) \(parameters)")
        }
    }

    @Test(arguments: sessionNames)
    func aSessionErrorReplyReadsAsTheFullClientReadsIt(name: String) {
        for parameters in Self.parameterSets {
            let expected = SessionWireError.decode(name, parameters)
            let lean = WireFailure.session(name, parameters)
            #expect(lean.message == expected.reason, "\(name) \(parameters)")
            #expect(lean.status == ExitStatus(expected.code), "\(name) \(parameters)")
        }
    }
}
