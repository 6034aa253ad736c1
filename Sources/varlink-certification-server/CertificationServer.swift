import Dispatch
import Logging
import Varlink

#if canImport(Glibc)
import Glibc
#endif

/// `varlink-certification-server --socket PATH`: serves `org.varlink.certification` so that
/// reference clients can certify the Varlink module. Stops on SIGINT or SIGTERM.
@main
enum CertificationServer {
    static func main() async {
        guard let path = socketPath(CommandLine.arguments) else {
            FileHandleStderr.write("usage: varlink-certification-server --socket PATH\n")
            exit(2)
        }
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        let server = VarlinkServer(
            info: VarlinkServiceInfo(vendor: "sortedvault", product: "varlink-certification-server", version: "1", url: "https://varlink.org"),
            interfaces: [CertificationInterface()],
            logger: Logger(label: "varlink-certification-server"))
        do {
            try await server.bind(unixSocketPath: path)
        } catch {
            FileHandleStderr.write("varlink-certification-server: \(error)\n")
            exit(1)
        }
        print("Listening on unix:\(path)")
        fflush(nil)
        await waitForTerminationSignal()
        try? await server.shutdown()
    }

    private static func socketPath(_ arguments: [String]) -> String? {
        var iterator = arguments.dropFirst().makeIterator()
        while let argument = iterator.next() {
            if argument == "--socket" { return iterator.next() }
            if argument.hasPrefix("--socket=") { return String(argument.dropFirst("--socket=".count)) }
            if argument.hasPrefix("--varlink=unix:") { return String(argument.dropFirst("--varlink=unix:".count)) }
        }
        return nil
    }

    private static func waitForTerminationSignal() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let queue = DispatchQueue(label: "signals")
            let once = OnceFlag()
            for signalNumber in [SIGINT, SIGTERM] {
                signal(signalNumber, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
                source.setEventHandler {
                    if once.claim() { continuation.resume() }
                }
                source.resume()
                SignalSources.keep(source)
            }
        }
    }
}

/// Keeps signal sources alive for the life of the process.
enum SignalSources {
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []
    static func keep(_ source: any DispatchSourceSignal) { sources.append(source) }
}

/// True exactly once, from any thread.
final class OnceFlag: @unchecked Sendable {
    private var claimed = false
    private let lock = DispatchQueue(label: "once")
    func claim() -> Bool {
        lock.sync {
            defer { claimed = true }
            return !claimed
        }
    }
}

enum FileHandleStderr {
    static func write(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    }
}
