import Foundation
import Logging
import NIOConcurrencyHelpers
import Synchronization
import Testing
import Varlink

/// A throwaway directory under /tmp, removed on deinit. Short paths: sun_path holds 107 bytes.
final class TemporaryDirectory {
    let path: String

    init() {
        var template = Array("/tmp/vl-XXXXXX".utf8CString)
        path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Records oneway calls so that tests can see they ran.
final class CallRecorder: Sendable {
    private let calls = NIOLockedValueBox<[String]>([])
    func record(_ value: String) { calls.withLockedValue { $0.append(value) } }
    var recorded: [String] { calls.withLockedValue { $0 } }
}

/// `org.example.test`, a small interface exercising every shape of call.
struct TestInterface: VarlinkInterface {
    let name = "org.example.test"
    let recorder = CallRecorder()
    /// Every call as it reached the handler, as "Member marker" (see ``arrival(_:_:)``), so that a test
    /// can tell a connection closed before its call arrived from one closed during it.
    let arrivals = CallRecorder()
    var interfaceDescription: String {
        """
        interface org.example.test
        method Echo(text: ?string) -> (text: ?string)
        method Sleep(milliseconds: int, tag: int) -> (tag: int)
        method Count(to: int) -> (number: int)
        method Record(value: string) -> ()
        method Recorded() -> (values: []string)
        method WhoAmI() -> (uid: int, gid: int, pid: int, executable: ?string, groups: ?[]int)
        method Typed(s: string, i: int, b: bool, o: ?object) -> ()
        method Fail() -> ()
        method NotImplemented() -> ()
        method Now(tag: int) -> (tag: int, inTask: bool)
        method Secret(secret: string) -> (secret: string, inParameters: bool)
        """
    }

    /// `secret` is diverted: the handler gets its raw bytes, never a `String`.
    var secretParameters: VarlinkSecretParameters? {
        VarlinkSecretParameters(paths: ["secret"]) { _, raw in [UInt8](raw) }
    }

    /// `Now` with a tag ≥ 0 is answered now, on the event loop; a negative tag, and every other
    /// method, in a task. `inTask` tells where it ran; a tag of -1000 or less throws now.
    func handle(_ call: VarlinkCall, context: VarlinkCallContext) throws -> VarlinkAnswer {
        arrivals.record(Self.arrival(call.member, call.parameters))
        switch call.member {
        case "Now":
            let tag = try call.int("tag")
            if tag <= -1000 { throw VarlinkError.methodNotImplemented(call.method) }
            guard tag < 0 else { return ["tag": .int(tag), "inTask": .bool(withUnsafeCurrentTask { $0 != nil })] }
            return .task { ["tag": .int(tag), "inTask": .bool(withUnsafeCurrentTask { $0 != nil })] }
        default:
            return .task { try await answerLater(call, context: context) }
        }
    }

    /// A call's member and its `text`, else its `tag`: what ``arrivals`` records.
    static func arrival(_ member: String, _ parameters: [String: JSONValue]) -> String {
        let marker = parameters["text"]?.stringValue ?? parameters["tag"]?.intValue.map { String($0) } ?? ""
        return member + " " + marker
    }

    private func answerLater(_ call: VarlinkCall, context: VarlinkCallContext) async throws -> VarlinkReply {
        switch call.member {
        case "Echo":
            return ["text": call.parameters["text"] ?? nil]
        case "Sleep":
            try await Task.sleep(for: .milliseconds(try call.int("milliseconds")))
            return ["tag": .int(try call.int("tag"))]
        case "Count":
            guard call.more else { throw VarlinkError.expectedMore }
            let to = try call.int("to")
            for number in 0..<max(0, to - 1) {
                try await context.reply(["number": .int(number)])
            }
            return ["number": .int(max(0, to - 1))]
        case "Record":
            recorder.record(try call.string("value"))
            return [:]
        case "Recorded":
            return ["values": .array(recorder.recorded.map(JSONValue.string))]
        case "WhoAmI":
            let peer = context.peer
            return ["uid": .int(Int64(peer.uid)), "gid": .int(Int64(peer.gid)), "pid": .int(Int64(peer.pid)),
                    "executable": peer.executable.map(JSONValue.string) ?? nil,
                    "groups": peer.groups.map { .array($0.map { .int(Int64($0)) }) } ?? nil]
        case "Typed":
            _ = try call.string("s")
            _ = try call.int("i")
            _ = try call.bool("b")
            _ = try call.optionalObject("o")
            return [:]
        case "Fail":
            struct Secret: Error { let token = "hunter2" }
            throw Secret()
        case "NotImplemented":
            throw VarlinkError.methodNotImplemented(call.method)
        case "Secret":
            // Answers the secret reversed, as bytes the handler encoded itself (streamed for `more`).
            let raw = call.secrets["secret"] as? [UInt8] ?? []
            let reply = EncodedParameters(#"{"secret":"\#(String(decoding: raw.reversed(), as: UTF8.self))","inParameters":\#(call.parameters["secret"] != nil)}"#)
            if call.more { try await context.reply(.encoded(reply)) }
            return .encoded(reply)
        default:
            throw VarlinkError.methodNotFound(call.method)
        }
    }
}

/// An in-process server on a socket in a temporary directory.
final class LiveServer: @unchecked Sendable {
    let directory = TemporaryDirectory()
    let server: VarlinkServer
    let interface = TestInterface()
    var socketPath: String { directory.path + "/test.sock" }

    init(configure: (inout VarlinkServerConfiguration) -> Void = { _ in }) async throws {
        var configuration = VarlinkServerConfiguration()
        // A connection a test holds open stays open until the test closes it: the idle timer is a
        // day unless the test is about the idle timer. With the default minute, a loaded machine
        // once let a test's four held connections idle out before it counted them (count 0, not 4).
        configuration.idleTimeout = .seconds(86_400)
        configure(&configuration)
        var logger = Logger(label: "varlink-test")
        logger.logLevel = .critical
        server = VarlinkServer(
            info: VarlinkServiceInfo(vendor: "test", product: "varlink-tests", version: "1", url: "https://example.org"),
            interfaces: [interface], configuration: configuration, logger: logger)
        try await server.bind(unixSocketPath: socketPath)
    }

    func connect() throws -> VarlinkConnection {
        try VarlinkConnection(unixSocketPath: socketPath, timeout: .seconds(60))
    }

    /// Checks that a fresh client is served normally.
    func expectServesAnotherClient(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let (reply, text) = try await callArrivingOnAFreshConnection("Echo") { attempt in
            let text = JSONValue.string("still alive \(attempt)")
            return (["text": text], text)
        }
        #expect(reply == ["text": text], sourceLocation: sourceLocation)
    }

    /// Calls `org.example.test.<member>` on a fresh connection, with the parameters `attempt` gives
    /// (their `text` or `tag` must be new on each attempt), and returns the reply and `attempt`'s value.
    ///
    /// The idle timer runs from the accept, and a loaded machine has held a test's thread between its
    /// connect and its send for longer than a short idle timeout. A connection closed before its call
    /// reached the handler tested nothing, so the call goes again on another connection; a close after
    /// the call arrived is thrown. After 20 closes before the call, the last one is thrown.
    func callArrivingOnAFreshConnection<Value: Sendable>(
        _ member: String, attempt: @escaping @Sendable (Int) -> ([String: JSONValue], Value)
    ) async throws -> ([String: JSONValue], Value) {
        let path = socketPath, arrivals = interface.arrivals
        return try await io {
            for number in 1... {
                let (parameters, value) = attempt(number)
                let connection = try VarlinkConnection(unixSocketPath: path, timeout: .seconds(60))
                defer { connection.close() }
                do {
                    return (try connection.call("org.example.test." + member, parameters), value)
                } catch VarlinkClientError.connectionClosed
                    where number < 20 && !arrivals.recorded.contains(TestInterface.arrival(member, parameters)) {
                    continue
                }
            }
            fatalError("unreachable: the loop returns or throws")
        }
    }

    /// Polls (bounded) until `condition` holds.
    func eventually(within: Duration = .seconds(600), _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + within
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }

    func stop() async throws {
        try await server.shutdown()
    }
}

/// A raw socket for sending arbitrary bytes and reading frames. Its 60 s receive timeout only guards
/// against a hang: no test waits for it, so a slow machine cannot fail a test through it.
final class RawClient: @unchecked Sendable {
    let descriptor: CInt
    nonisolated(unsafe) private var received: [UInt8] = []

    init(path: String) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Foundation.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else { throw POSIXError(.ECONNREFUSED) }
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { Foundation.close(descriptor) }

    /// Sends everything, blocking.
    func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Foundation.send(descriptor, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return }
            offset += sent
        }
    }

    func send(_ text: String) { send(Array(text.utf8)) }

    /// Sends without blocking; returns false once the socket would block.
    func trySend(_ bytes: [UInt8]) -> Bool {
        let sent = bytes.withUnsafeBytes { Foundation.send(descriptor, $0.baseAddress!, bytes.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        return sent == bytes.count
    }

    func shutdownWrite() { Foundation.shutdown(descriptor, Int32(SHUT_WR)) }

    enum Read: Equatable {
        case frame(JSONValue)
        case closed
        case timedOut
    }

    /// The next reply frame, parsed; `.closed` on EOF.
    func readFrame() -> Read {
        while true {
            if let nul = received.firstIndex(of: 0) {
                let frame = Array(received[..<nul])
                received.removeFirst(nul + 1)
                return (try? JSONValue.parse(frame)).map(Read.frame) ?? .closed
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress!, $0.count, 0) }
            if count > 0 {
                received += chunk[..<count]
            } else if count == 0 || errno == ECONNRESET {
                return .closed
            } else if errno != EINTR {
                return .timedOut
            }
        }
    }

    /// Reads until EOF, discarding; true when the server closed the connection.
    func readUntilClosed() -> Bool {
        while true {
            switch readFrame() {
            case .frame: continue
            case .closed: return true
            case .timedOut: return false
            }
        }
    }
}

func errorName(_ read: RawClient.Read) -> String? {
    guard case .frame(let value) = read else { return nil }
    return value["error"]?.stringValue
}

/// Runs blocking socket I/O on a thread of its own. Blocking inside a test's async context would
/// hold one of the few cooperative-pool threads that the server's handlers also need (2 on a
/// 2-core machine), and the server would appear hung.
func io<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(with: Result { try body() })
        }
        thread.start()
    }
}

/// ``io(_:)`` for bodies that cannot fail.
func io<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread {
            continuation.resume(returning: body())
        }
        thread.start()
    }
}

/// A reply's `parameters` object as ready-made bytes.
struct EncodedParameters: VarlinkEncodedParameters {
    let bytes: [UInt8]
    init(_ text: String) { bytes = Array(text.utf8) }
    func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try bytes.withUnsafeBytes(body)
    }
}
