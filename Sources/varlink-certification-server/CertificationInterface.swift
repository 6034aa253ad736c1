import NIOConcurrencyHelpers
import Synchronization
import Varlink

/// `org.varlink.certification`, ported from the Python reference server
/// (`varlink/tests/test_certification.py`): a client must call Start, Test01 … Test11 and End in
/// order, passing each reply on to the next call, and every message is checked against what a
/// correct client sends.
struct CertificationInterface: VarlinkInterface {
    static let prefix = "org.varlink.certification."
    let name = "org.varlink.certification"
    var interfaceDescription: String { Self.idl }

    /// The method each client id must call next, oldest client first. Bounded: the oldest
    /// clients are forgotten first.
    private let clients = ClientTable()
    private static let maxClients = 1000

    /// The parameters each method accepts (the reference server answers InvalidParameter for others).
    private static let parameterNames: [String: Set<String>] = [
        "Start": [], "Test01": ["client_id"], "Test02": ["client_id", "bool"], "Test03": ["client_id", "int"],
        "Test04": ["client_id", "float"], "Test05": ["client_id", "string"],
        "Test06": ["client_id", "bool", "int", "float", "string"], "Test07": ["client_id", "struct"],
        "Test08": ["client_id", "map"], "Test09": ["client_id", "set"], "Test10": ["client_id", "mytype"],
        "Test11": ["client_id", "last_more_replies"], "End": ["client_id"],
    ]

    func handle(_ call: VarlinkCall, context: VarlinkCallContext) throws -> VarlinkAnswer {
        guard let allowed = Self.parameterNames[call.member] else { throw VarlinkError.methodNotFound(call.method) }
        for name in call.parameters.keys where !allowed.contains(name) {
            throw VarlinkError.invalidParameter(name)
        }
        if call.member == "Start" {
            let id = newClient()
            try advance(id, from: "Start", to: "Test01")
            try expect(id, call, equals: ["method": .string(call.method)])
            return ["client_id": .string(id)]
        }
        let id = call.parameters["client_id"]?.stringValue ?? ""
        if let step = Self.steps[call.member] {
            try advance(id, from: call.member, to: step.next)
            try expect(id, call, equals: message(call.member, step.sent.merging(["client_id": .string(id)]) { $1 }))
            return .reply(.parameters(step.reply))
        }
        switch call.member {
        case "Test09":
            try advance(id, from: "Test09", to: "Test10")
            try expect(id, call, equals: message("Test09", ["client_id": .string(id), "set": Self.set]))
            var mytype = Self.mytype
            mytype["nullable"] = .null
            mytype["nullable_array_struct"] = .null
            return ["client_id": .string(id), "mytype": .object(mytype)]
        case "Test10":
            return try test10(id, call, context: context)
        case "Test11":
            return try test11(id, call)
        case "End":
            try advance(id, from: "End", to: "Start")
            try expect(id, call, equals: message("End", ["client_id": .string(id)]))
            clients.withLock { $0.removeAll { $0.id == id } }
            return ["all_ok": true]
        default:
            throw VarlinkError.methodNotFound(call.method)
        }
    }

    /// The steps whose call and reply are fixed: what the client sends besides its id, and the reply.
    private static let steps: [String: (next: String, sent: [String: JSONValue], reply: [String: JSONValue])] = [
        "Test01": ("Test02", [:], ["bool": true]),
        "Test02": ("Test03", ["bool": true], ["int": 1]),
        "Test03": ("Test04", ["int": 1], ["float": 1.0]),
        "Test04": ("Test05", ["float": 1.0], ["string": "ping"]),
        "Test05": ("Test06", ["string": "ping"], scalars),
        "Test06": ("Test07", scalars, ["struct": .object(scalars)]),
        "Test07": ("Test08", ["struct": .object(scalars)], ["map": map]),
        "Test08": ("Test09", ["map": map], ["set": set]),
    ]

    /// The client sends `mytype` with its nullables null or absent, and asks for more: ten replies.
    private func test10(_ id: String, _ call: VarlinkCall, context: VarlinkCallContext) throws -> VarlinkAnswer {
        try advance(id, from: "Test10", to: "Test11")
        guard call.more else { throw VarlinkError.expectedMore }
        var wants = message("Test10", ["client_id": .string(id), "mytype": .object(Self.mytype)])
        wants["more"] = true
        var mytype = call.parameters["mytype"]?.objectValue ?? [:]
        for key in ["nullable", "nullable_array_struct"] {
            if let value = mytype.removeValue(forKey: key) {
                try check(id, call, wants: wants, value.isNull)
            }
        }
        try check(id, call, wants: wants, looselyEqual(.object(mytype), .object(Self.mytype)))
        return .task {
            for number in 1...9 {
                try await context.reply(["string": .string("Reply number \(number)")])
            }
            return ["string": "Reply number 10"]
        }
    }

    /// The client sends back the ten replies it got, one way.
    private func test11(_ id: String, _ call: VarlinkCall) throws -> VarlinkAnswer {
        try advance(id, from: "Test11", to: "End")
        let replies = (1...10).map { JSONValue.string("Reply number \($0)") }
        var wants = message("Test11", ["client_id": .string(id), "last_more_replies": .array(replies)])
        wants["oneway"] = true
        try check(id, call, wants: wants, call.oneway)
        try check(id, call, wants: wants, looselyEqual(call.parameters["last_more_replies"] ?? .null, .array(replies)))
        return [:]
    }

    // MARK: - Expected values

    private static let scalars: [String: JSONValue] = [
        "bool": false, "int": 2, "float": .double(Double.pi), "string": "a lot of string",
    ]
    private static let map: JSONValue = ["foo": "Foo", "bar": "Bar"]
    private static let set: JSONValue = ["one": [:], "two": [:], "three": [:]]
    private static let mytype: [String: JSONValue] = [
        "object": ["method": "org.varlink.certification.Test09", "parameters": ["map": map]],
        "enum": "two",
        "struct": ["first": 1, "second": "2"],
        "array": ["one", "two", "three"],
        "dictionary": map,
        "stringset": set,
        "interface": [
            "foo": [nil, ["foo": "foo", "bar": "bar"], nil, ["one": "foo", "two": "bar"]],
            "anon": ["foo": true, "bar": false],
        ],
    ]

    private func message(_ member: String, _ parameters: [String: JSONValue]) -> [String: JSONValue] {
        ["method": .string(Self.prefix + member), "parameters": .object(parameters)]
    }

    // MARK: - The checks of the reference server

    private func newClient() -> String {
        var generator = SystemRandomNumberGenerator()
        let id = (0..<16).map { _ in
            let byte = UInt8.random(in: 0...255, using: &generator)
            return String(byte >> 4, radix: 16) + String(byte & 0xF, radix: 16)
        }.joined()
        clients.withLock { clients in
            clients.append((id, "Start"))
            if clients.count > Self.maxClients { clients.removeFirst(clients.count - Self.maxClients) }
        }
        return id
    }

    /// The call as the reference server sees it: empty parameters dropped, flags only when set.
    private func received(_ call: VarlinkCall) -> JSONValue {
        var message: [String: JSONValue] = ["method": .string(call.method)]
        if !call.parameters.isEmpty { message["parameters"] = .object(call.parameters) }
        if call.more { message["more"] = true }
        if call.oneway { message["oneway"] = true }
        return .object(message)
    }

    private func advance(_ id: String, from current: String, to next: String) throws {
        let expected: String? = clients.withLock { clients in
            guard let index = clients.firstIndex(where: { $0.id == id }) else { return nil }
            let expected = clients[index].next
            if expected == current { clients[index].next = next }
            return expected
        }
        guard let expected else {
            throw certificationError(wants: ["method": .string(Self.prefix + "Start+++")], got: ["method": .string(Self.prefix + current)])
        }
        guard expected == current else {
            throw certificationError(wants: .string("Call to method \(Self.prefix)\(expected)"), got: .string("Call to method \(Self.prefix)\(current)"))
        }
    }

    private func expect(_ id: String, _ call: VarlinkCall, equals wants: [String: JSONValue]) throws {
        try check(id, call, wants: wants, looselyEqual(received(call), .object(wants)))
    }

    private func check(_ id: String, _ call: VarlinkCall, wants: [String: JSONValue], _ condition: Bool) throws {
        guard !condition else { return }
        clients.withLock { $0.removeAll { $0.id == id } }
        throw certificationError(wants: .object(wants), got: received(call))
    }

    private func certificationError(wants: JSONValue, got: JSONValue) -> VarlinkError {
        VarlinkError(name: Self.prefix + "CertificationError", parameters: ["wants": wants, "got": got])
    }
}

/// JSON equality as Python compares decoded JSON: `1 == 1.0`.
func looselyEqual(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case (.int, .double), (.double, .int), (.double, .double), (.int, .int):
        return a.doubleValue == b.doubleValue
    case (.array(let x), .array(let y)):
        return x.count == y.count && zip(x, y).allSatisfy(looselyEqual)
    case (.object(let x), .object(let y)):
        return x.count == y.count && x.allSatisfy { key, value in y[key].map { looselyEqual(value, $0) } ?? false }
    default:
        return a == b
    }
}

/// The certification clients in progress, shared by all connections.
final class ClientTable: Sendable {
    private let state = NIOLockedValueBox<[(id: String, next: String)]>([])

    func withLock<R>(_ body: (inout [(id: String, next: String)]) -> R) -> R {
        state.withLockedValue { body(&$0) }
    }
}
