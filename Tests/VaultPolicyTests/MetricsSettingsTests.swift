import Testing
import VaultPolicy

/// `[metrics] listen`: off by default, loopback addresses and Unix sockets only, and errors that say
/// what to write.
struct MetricsSettingsTests {
    @Test func noTableServesNoMetrics() throws {
        #expect(try DaemonSettings.parse("", file: "settings.toml").metrics == nil)
        #expect(DaemonSettings.builtInDefault.metrics == nil)
    }

    @Test(arguments: [
        ("127.0.0.1:9464", MetricsEndpoint.tcp(host: "127.0.0.1", port: 9464)),
        ("127.10.0.3:1", .tcp(host: "127.10.0.3", port: 1)),
        ("[::1]:9464", .tcp(host: "::1", port: 9464)),
        ("unix:/run/sortedvault/metrics.sock", .unixSocket(path: "/run/sortedvault/metrics.sock")),
    ])
    func loopbackAddressesAndUnixSocketsAreRead(listen: String, endpoint: MetricsEndpoint) throws {
        let settings = try DaemonSettings.parse("[metrics]\nlisten = \"\(listen)\"\n", file: "settings.toml")
        #expect(settings.metrics == endpoint)
        #expect(settings.metrics?.description == listen)
    }

    @Test(arguments: [
        ("0.0.0.0:9464", "is not a loopback address"),
        ("192.168.1.10:9464", "is not a loopback address"),
        ("[::]:9464", "is not a loopback address"),
        ("localhost:9464", "is not a loopback address"),
        ("128.0.0.1:9464", "is not a loopback address"),
        ("127.0.0.256:9464", "is not a loopback address"),
        ("127.0.0.1", "has no port"),
        ("127.0.0.1:0", "has no port from 1 to 65535"),
        ("127.0.0.1:99999", "has no port from 1 to 65535"),
        ("unix:metrics.sock", "needs an absolute socket path"),
        ("unix:/" + String(repeating: "a", count: 120), "holds at most 107 bytes"),
    ])
    func otherAddressesAreRefusedSayingWhatToWrite(listen: String, fragment: String) {
        let error = policyError { _ = try DaemonSettings.parse("[metrics]\nlisten = \"\(listen)\"\n", file: "settings.toml") }
        #expect(error?.line == 2, "\(String(describing: error))")
        #expect(error?.description.contains(fragment) == true, "\(String(describing: error))")
        #expect(error?.description.contains("listen = \"127.0.0.1:9464\"") == true || fragment.contains("107"), "\(String(describing: error))")
    }

    @Test func theTableNeedsListenAndNothingElse() {
        let missing = policyError { _ = try DaemonSettings.parse("[metrics]\n", file: "settings.toml") }
        #expect(missing?.description.contains("missing the required key 'listen'") == true, "\(String(describing: missing))")
        let unknown = policyError { _ = try DaemonSettings.parse("[metrics]\nlisten = \"127.0.0.1:9464\"\npath = \"/m\"\n", file: "settings.toml") }
        #expect(unknown?.description.contains("unknown key 'path' in [metrics]") == true, "\(String(describing: unknown))")
    }
}
