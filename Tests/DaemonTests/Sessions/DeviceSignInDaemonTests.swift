import BoundedJSON
import Foundation
import TestSupport
import Testing
import VaultClient
import VaultCore
import VaultSession

extension DaemonSuite {
    /// `sortedvault session login --flow device` end to end: the real CLI and daemon against
    /// django-oauth-toolkit's device grant (RFC 8628), approved on DOT's own pages in headless Chromium.
    @Suite struct DeviceSignInDaemonTests {
        /// The public client with the device grant, as `session login` options.
        static func providerArguments(_ world: SignInWorld) -> [String] {
            ["--kind", "oauth2", "--token-endpoint", world.provider.base + "/o/token/",
             "--device-authorization-endpoint", world.provider.base + "/o/device-authorization/", "--client-id", "sorted-device"]
        }

        static func login(_ world: SignInWorld) throws -> BackgroundCommand {
            try BackgroundCommand([CLIHarness.executable, "session", "login", world.service, "ada", "--flow", "device"]
                                  + providerArguments(world) + ["--scope", "read", "--timeout", "120", "--no-autostart"],
                                  environment: world.environment(), directory: world.cli.root)
        }

        /// The code and the page that carries it, as the CLI printed them on standard error.
        static func printedCode(_ login: BackgroundCommand) throws -> (code: String, page: URL) {
            let text = try login.waitForStandardError { $0.contains("Waiting for the sign-in to be approved") }
            let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            let code = try #require(lines.firstIndex { $0 == "and enter the code" }.map { lines[$0 + 1] })
            let complete = try #require(lines.first { $0.hasPrefix("(or open ") })
            let page = try #require(URL(string: String(complete.dropFirst("(or open ".count).prefix { $0 != "," })))
            return (code, page)
        }

        static func pollTimes(_ world: SignInWorld) async throws -> [Double] {
            try await world.provider.stats()["device_polls"]?.arrayValue?.compactMap { value -> Double? in
                switch value {
                case .double(let seconds): seconds
                case .int(let seconds): Double(seconds)
                default: nil
                }
            } ?? []
        }

        @Test func aCodeApprovedInTheBrowserIsStoredAndAPollAfterSlowDownWaitsFiveSecondsMore() async throws {
            let world = try SignInWorld(deviceInterval: 1)
            try await world.provider.control("/test/device", ["slow_down": .int(1)])
            let login = try Self.login(world)
            let (code, page) = try Self.printedCode(login)
            #expect(code.count >= 6 && page.query?.contains(code) == true, "\(code) \(page)")

            let approved = try world.browse(page, device: true)
            #expect(approved.body.contains("Authorized"), "\(approved)")
            #expect(login.wait() == 0, "\(login.standardError)")
            #expect(login.standardOutput.contains("signed in: com.sorted.api ada"), "\(login.standardOutput)")

            // The provider's own record: the poll after slow_down came at least interval + 5 s later.
            let polls = try await Self.pollTimes(world)
            #expect(polls.count >= 2, "\(polls)")
            if polls.count >= 2 { #expect(polls[1] - polls[0] >= 6, "\(polls)") }

            let status = try await world.sessions.status(try ItemKey(service: world.service, account: "ada"))
            #expect(status.hasRefreshToken && status.clientID == "sorted-device")
            let token = try world.cli.run(["session", "autologin", world.service, "ada"]).text
            #expect(token.count > 10)
            for (name, text) in [("stderr", login.standardError), ("stdout", login.standardOutput)] {
                #expect(!text.contains(token), "\(name) holds the access token")
            }
        }

        @Test func aCodeDeniedInTheBrowserEndsTheSignInWithExitEightAndStoresNothing() async throws {
            let world = try SignInWorld(deviceInterval: 1)
            let login = try Self.login(world)
            let (_, page) = try Self.printedCode(login)
            let denied = try world.browse(page, deny: true, device: true)
            #expect(denied.body.contains("Denied"), "\(denied)")
            #expect(login.wait() == 8, "\(login.standardError)")
            #expect(login.standardError.contains("declined"), "\(login.standardError)")
            await #expect(throws: VaultError.self) {
                _ = try await world.sessions.status(try ItemKey(service: world.service, account: "ada"))
            }
        }

        @Test func aCodeThatExpiresEndsTheSignInWithExitEightAndStoresNothing() async throws {
            let world = try SignInWorld(deviceInterval: 1)
            let login = try Self.login(world)
            _ = try Self.printedCode(login)
            try await world.provider.control("/test/device", ["expire": .bool(true)])
            #expect(login.wait() == 8, "\(login.standardError)")
            #expect(login.standardError.contains("expired"), "\(login.standardError)")
            await #expect(throws: VaultError.self) {
                _ = try await world.sessions.status(try ItemKey(service: world.service, account: "ada"))
            }
        }

        @Test func theDaemonSettingRefusesTheDeviceFlowWithTheReason() async throws {
            let world = try SignInWorld(deviceInterval: 1, session: "device_flow = false\n")
            let login = try Self.login(world)
            #expect(login.wait() != 0)
            #expect(login.standardError.contains("device_flow = false"), "\(login.standardError)")
            #expect(try await Self.pollTimes(world).isEmpty)
        }
    }
}
