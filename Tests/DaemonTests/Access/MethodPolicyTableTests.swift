import Foundation
import TestSupport
import Testing
import Varlink
import VarlinkIDL
import VaultAPI

extension DaemonSuite {
    /// Every method of both interfaces, read from the interface files, is refused to a program that
    /// no rule allows it: the generated dispatcher checks each method's `@operation` before its
    /// body, whatever the method (the table grows with the files, never by hand).
    @Suite struct MethodPolicyTableTests {
        /// A valid value of `type` for a call: the least a decoder accepts. Every string is "abcd",
        /// which is both a valid name and valid base64 (for the secrets); absent optionals.
        static func sample(_ type: IDLType, _ interface: IDLInterface) -> JSONValue? {
            switch type {
            case .optional: return nil
            case .bool: return .bool(false)
            case .int: return .int(1)
            case .float: return .double(1)
            case .string: return .string("abcd")
            case .object, .map: return .object([:])
            case .array: return .array([])
            case .enumeration(let values): return .string(values[0])
            case .structure(let fields): return .object(sample(fields, interface))
            case .named(let name):
                let member = interface.members.first { $0.name == name }
                guard case .type(let named)? = member?.kind else { return nil }
                return sample(named, interface)
            }
        }

        static func sample(_ fields: [IDLField], _ interface: IDLInterface) -> [String: JSONValue] {
            var object: [String: JSONValue] = [:]
            for field in fields { object[field.name] = sample(field.type, interface) }
            return object
        }

        static func interfaces() throws -> [IDLInterface] {
            let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().deletingLastPathComponent().appending(path: "interfaces")
            return try ["org.sortedvault.vault", "org.sortedvault.session"].map { name in
                try VarlinkIDL.parse(String(contentsOf: directory.appending(path: name + ".varlink"), encoding: .utf8))
            }
        }

        @Test func aProgramWithNoRuleForAMethodIsDeniedEveryMethodOfBothInterfaces() throws {
            let interfaces = try Self.interfaces()
            // The table is the generated method lists: every method the daemon serves is in it.
            let methods = try interfaces.flatMap { interface in try interface.methodRoles().map { interface.name + "." + $0.member.name } }
            #expect(Set(methods) == Set(VaultInterface.Method.allCases.map(\.rawValue) + SessionInterface.Method.allCases.map(\.rawValue)))
            #expect(methods.count >= 27)

            let cli = try CLIHarness(autostart: false)
            try cli.initKeyFileVault()
            // The test program is admitted (one rule names it), for an operation on a service no call names.
            try cli.writePolicy(access: PolicyText.ownerCLIAnd(SessionNameConfusionTests.testExecutable,
                                                               operations: ["session.status"], services: ["nothing.matches.*"]),
                                settings: "")
            try cli.startDaemon()
            defer { cli.stopDaemon() }
            let connection = try VarlinkConnection(unixSocketPath: cli.socket)
            defer { connection.close() }
            for interface in interfaces {
                for method in try interface.methodRoles() {
                    let name = interface.name + "." + method.member.name
                    do {
                        let reply = try connection.call(name, Self.sample(method.input, interface))
                        Issue.record("\(name) answered a program without a rule for it: \(reply)")
                    } catch let error as VarlinkError {
                        #expect(error.name == interface.name + ".PermissionDenied", "\(name): \(error.name) \(error.parameters)")
                        #expect(error.parameters["operation"] == .string(method.role.operation), "\(name): \(error.parameters)")
                        if case .field(_, let optional) = method.role.service, !optional.contains(true) {
                            #expect(error.parameters["service"] == .string("abcd"), "\(name): \(error.parameters)")
                        }
                    }
                }
            }
            // The owner's CLI, under the same policy, is served.
            #expect(try cli.run(["status"]).status == 0)
        }

        /// A sign-in flow that has ended (or never was) is checked as asking for some service: a
        /// program allowed `session.login` for its own services hears that the flow is gone, not
        /// that it is denied.
        @Test func aProgramWithALoginRuleHearsThatAnEndedFlowIsGone() throws {
            let cli = try CLIHarness(autostart: false)
            try cli.initKeyFileVault()
            try cli.writePolicy(access: PolicyText.ownerCLIAnd(SessionNameConfusionTests.testExecutable,
                                                               operations: ["session.login"], services: ["com.a.*"]),
                                settings: "")
            try cli.startDaemon()
            defer { cli.stopDaemon() }
            let connection = try VarlinkConnection(unixSocketPath: cli.socket)
            defer { connection.close() }
            #expect(try connection.call("org.sortedvault.session.CancelLogin", ["flowId": "ended"]) == ["cancelled": .bool(false)])
            do {
                let reply = try connection.call("org.sortedvault.session.CompleteLogin", ["flowId": "ended", "callbackQuery": "Y29kZT14"])
                Issue.record("an ended flow completed: \(reply)")
            } catch let error as VarlinkError {
                #expect(error.name == "org.sortedvault.session.InvalidParameter", "\(error.name) \(error.parameters)")
                #expect(error.parameters["reason"]?.stringValue?.contains("no sign-in is under way with this flow id") == true, "\(error.parameters)")
            }
        }
    }
}