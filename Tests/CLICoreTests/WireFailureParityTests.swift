import BoundedJSON
import CLIOptions
import Testing
import Varlink
import VaultAPI
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
         "retryAfterSeconds": 2.2, "error": "invalid_grant", "flowId": "0f1e"],
    ]

    static let vaultNames = ["NotFound", "Locked", "PermissionDenied", "InvalidParameter", "WrongPassphrase", "TooManyAttempts",
                             "IntegrityFailure", "StorageFailure", "Unsupported", "SomethingNew"].map { "org.sortedvault.vault." + $0 }
        + ["org.varlink.service.PermissionDenied", "org.varlink.service.InvalidParameter", "org.varlink.service.MethodNotFound"]

    static let sessionNames = ["LoginStateMismatch", "NoSession", "Locked", "PermissionDenied", "InvalidParameter", "ProviderRejected",
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

    /// One reply of every error the interface files declare, written by its generated type.
    static let everyDeclaredError: [any InterfaceError] = [
        VaultInterface.NotFound(service: "svc", account: "ada"), VaultInterface.Locked(reason: nil),
        VaultInterface.PermissionDenied(operation: "retrieve", service: "svc"),
        VaultInterface.InvalidParameter(parameter: "service", reason: "a service name must not be empty"),
        VaultInterface.WrongPassphrase(), VaultInterface.TooManyAttempts(retryAfterSeconds: 2.2),
        VaultInterface.IntegrityFailure(reason: "an item failed"), VaultInterface.StorageFailure(reason: "the disk is full"),
        VaultInterface.Unsupported(reason: "no keyring"),
        SessionInterface.LoginStateMismatch(flowId: "0f1e"), SessionInterface.NoSession(service: "svc", account: "ada"),
        SessionInterface.Locked(), SessionInterface.PermissionDenied(operation: "session.login", service: nil),
        SessionInterface.InvalidParameter(parameter: "flowId", reason: "no sign-in is under way"),
        SessionInterface.ProviderRejected(error: "invalid_grant", reason: "the provider refused the code"),
        SessionInterface.IntegrityFailure(reason: "a login failed"), SessionInterface.StorageFailure(reason: "the disk is full"),
        SessionInterface.Unsupported(reason: "no device flow"),
    ]

    /// Every declared error is read by its generated decoder into its own code and text, never as
    /// an error the client does not know; the lean CLI read `LoginStateMismatch` so before.
    @Test func everyDeclaredErrorIsReadAsItself() {
        let declared = (VaultInterface.Errors.all + SessionInterface.Errors.all).map { $0.name }
        #expect(Set(Self.everyDeclaredError.map { type(of: $0).name }) == Set(declared), "the list holds every declared error")
        for error in Self.everyDeclaredError {
            let name = type(of: error).name
            let full = SessionWireError.decode(name, error.parameters)
            let lean = WireFailure.session(name, error.parameters)
            #expect(!lean.message.hasPrefix("the daemon answered with"), "\(name): \(lean.message)")
            #expect(lean.message == full.reason && lean.status == ExitStatus(full.code), "\(name)")
            if name == SessionInterface.LoginStateMismatch.name { #expect(full.code == .callbackMismatch) }
        }
    }
}
