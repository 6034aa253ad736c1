import Foundation
import Testing
import VarlinkIDL

/// The generator writes an interface's Swift face from a small IDL, the same every time, and
/// refuses what it cannot express at the IDL's line and column.
@Suite(.timeLimit(.minutes(20))) struct SwiftGeneratorTests {
    static let idl = """
        # A small interface.
        interface org.example.small

        # A colour.
        type Colour (red, green_light)

        type Box (
          name: string,
          # @secret secretBytes
          key: ?string,
          tags: []string,
          labels: [string]string,
          colour: Colour,
          shade: ?(dark, light),
          extra: object
        )

        type Label (text: string)

        # Gets a box.
        # @operation get
        # @service name
        # @activity
        method Get(name: string) -> (box: Box, labels: []Label)

        # @operation put
        method Put(
          name: string,
          # @secret passphraseBytes
          passphrase: string
        ) -> ()

        # @operation get
        # @service name
        method Peek(name: string) -> (box: Box, labels: []Label)

        # @handwritten
        # @operation odd
        method Odd(anything: object) -> ()

        # @operation list
        # @service box.name
        # @lists
        method Find(box: ?Box) -> ()

        # @operation put
        # @service ticket lookup
        method Claim(ticket: string) -> ()

        # Follows a box's changes (called with more).
        # @operation get
        # @service name
        # @streams
        method Follow(name: string) -> (box: Box)

        # No such box.
        error NotFound (name: string)
        error Empty ()
        """

    static func generate(_ text: String) throws(IDLError) -> String {
        let interface = try VarlinkIDL.parse(text)
        try interface.checkReferences(in: text)
        return try SwiftGenerator.generate(interface, file: Array(text.utf8), fileName: interface.name + ".varlink")
    }

    static func failure(_ text: String) -> IDLError? {
        do {
            _ = try generate(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func typesMethodsAndErrors() throws {
        let source = try Self.generate(Self.idl)
        let expected = [
            "public enum SmallInterface {",
            #"public static let name = "org.example.small""#,
            #"case get = "org.example.small.Get""#,
            #"case odd = "org.example.small.Odd""#,
            "public static let callSecrets = Put.requestSecrets.merging(Odd.requestSecrets)",
            "/// A colour.\n    public enum Colour: String, CaseIterable, Sendable {\n        case red\n        case green_light\n    }",
            "public struct Box: WireCodable, Equatable {",
            #"public static var secretLimits: SecretLimits { SecretLimits(["key": WireLimits.secretBytes]) }"#,
            "public var key: SecureBytes?",
            #"key = try p.optionalSecret("key")"#,
            #"w.secretField("key", key)"#,
            "public var tags: [String]",
            "public var labels: [String: String]",
            #"colour = try p.enumeration("colour")"#,
            "public enum Shade: String, CaseIterable, Sendable {",
            "public var shade: Shade?",
            #"shade = try p.optionalEnumeration("shade")"#,
            #"extra = try p.object("extra")"#,
            "public init(name: String, key: SecureBytes? = nil, tags: [String] = [], labels: [String: String] = [:], colour: Colour, shade: Shade? = nil, extra: [String: JSONValue] = [:]) {",
            "/// Gets a box.\n    public enum Get: VarlinkMethod {",
            #"labels = try p.decodeArray("labels")"#,
            "public var labels: [Label]",
            #"public static var replySecrets: SecretLimits { SecretLimits(["box.key": WireLimits.secretBytes]) }"#,
            #"public static var requestSecrets: SecretLimits { SecretLimits(["passphrase": WireLimits.passphraseBytes]) }"#,
            "public var passphrase: SecureBytes\n",
            "public typealias Reply = NoParameters",
            // One parameter list, one type.
            "public typealias Request = Get.Request",
            "public typealias Reply = Get.Reply",
            "public enum Odd: VarlinkMethod {\n        public static let name = SmallInterface.name + \".Odd\"\n        /// The policy operation the daemon checks the call as.\n        public static let operation = \"odd\"\n    }",
            "case .peek: \"get\"",
            "/// No such box.\n    public struct NotFound: InterfaceError, Equatable {\n        public static let name = SmallInterface.name + \".NotFound\"",
            "public struct Empty: InterfaceError, Equatable {",
            "public static let notFound = NotFound.name",
            "public static var all: [any InterfaceError.Type] { [NotFound.self, Empty.self] }",
            "public static let file: [UInt8] = [\n        0x23, 0x20, 0x41,",
        ]
        for snippet in expected {
            #expect(source.contains(snippet), "missing: \(snippet)")
        }
        // Tags steer the code; they are not copied into its comments.
        #expect(!source.contains("@secret"))
        #expect(!source.contains("@handwritten"))
        #expect(!source.contains("@operation"))
        // No secret is ever declared as text.
        #expect(!source.contains("public var key: String"))
        #expect(!source.contains("public var passphrase: String"))
    }

    /// A client conforms with one `send` and gets a typed stub per method, so a method the interface
    /// file adds needs no client code; a hand-written method has no types, a streamed one no single reply.
    @Test func everyMethodButHandWrittenAndStreamedOnesIsACallerStub() throws {
        let source = try Self.generate(Self.idl)
        #expect(source.contains("public protocol SmallInterfaceCaller: Sendable {"))
        #expect(source.contains("func send<M: VarlinkMethod & SendableMetatype>(_ method: M.Type, _ request: M.Request) async throws -> M.Reply"))
        #expect(source.contains("""
                /// Gets a box.
                public func get(_ request: SmallInterface.Get.Request) async throws -> SmallInterface.Get.Reply {
                    try await send(SmallInterface.Get.self, request)
                }
            """), "\(source)")
        for name in ["put", "peek", "find", "claim"] {
            #expect(source.contains("public func \(name)(_ request: SmallInterface."), "no stub for \(name)")
        }
        #expect(!source.contains("public func odd("))
        #expect(!source.contains("public func follow("))
        #expect(!source.contains("@streams"))
    }

    @Test func theSameInterfaceGivesTheSameCode() throws {
        #expect(try Self.generate(Self.idl) == Self.generate(Self.idl))
    }

    @Test func theRepositorysInterfacesGenerate() throws {
        for name in ["org.sortedvault.vault", "org.sortedvault.session"] {
            let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appending(path: "interfaces/\(name).varlink")
            let text = try String(contentsOf: url, encoding: .utf8)
            #expect(try Self.generate(text).contains("public static let name = \"\(name)\""))
        }
    }

    @Test func whatItCannotExpressFailsAtLineAndColumn() {
        let head = "interface org.example.bad\n# @operation a\n"
        let cases: [(String, IDLError)] = [
            (head + "method A(x: (y: int)) -> ()", IDLError(line: 3, column: 10, message: "an anonymous struct is not supported here: declare it as a type")),
            (head + "method A(x: []int) -> ()", IDLError(line: 3, column: 10, message: "the type of 'x' is not supported by the Swift generator")),
            (head + "method A(\n  # @secret secretBytes\n  x: int\n) -> ()", IDLError(line: 5, column: 3, message: "only a string field can be @secret")),
            (head + "method A(\n  # @secret\n  x: string\n) -> ()", IDLError(line: 5, column: 3, message: "@secret needs the name of its WireLimits size limit, e.g. @secret secretBytes")),
            (head + "method A(\n  # @sekret x\n  x: string\n) -> ()", IDLError(line: 5, column: 3, message: "unknown tag '@sekret' on field 'x'")),
            (head + "type T (\n  # @secret secretBytes\n  s: string\n)\n# @operation a\nmethod A(x: []T) -> ()", IDLError(line: 8, column: 10, message: "a secret inside an array or a map is not supported")),
        ]
        for (text, expected) in cases {
            #expect(Self.failure(text) == expected, "\(text)")
        }
    }

    // MARK: What a method means to the daemon

    /// A method without its operation cannot be generated, so it cannot be served: the build
    /// stops at the method's line and column.
    @Test func aMethodWithoutItsOperationOrWithABadRoleTagFailsAtItsLine() {
        let head = "interface org.example.bad\ntype T (name: string, size: int)\n"
        let cases: [(String, IDLError)] = [
            (head + "# A method.\nmethod A(x: string) -> ()", IDLError(line: 4, column: 1, message: "method 'A' has no @operation tag: say which policy operation checks it, e.g. '# @operation retrieve' above the method")),
            (head + "# @operation Retrieve\nmethod A() -> ()", IDLError(line: 4, column: 1, message: "@operation needs a policy operation name of lower-case letters, digits, '.' and '-', e.g. @operation retrieve")),
            (head + "# @operation a\n# @operation b\nmethod A() -> ()", IDLError(line: 5, column: 1, message: "method 'A' has two @operation tags")),
            (head + "# @operation a\n# @polcy x\nmethod A() -> ()", IDLError(line: 5, column: 1, message: "unknown tag '@polcy' on method 'A'; a method knows @activity, @handwritten, @lists, @operation, @service, @streams")),
            (head + "# @operation a\n# @service name\nmethod A(service: string) -> ()", IDLError(line: 5, column: 1, message: "@service name: the request has no parameter 'name'")),
            (head + "# @operation a\n# @service t.size\nmethod A(t: T) -> ()", IDLError(line: 5, column: 1, message: "@service t.size: the service must be a string parameter")),
            (head + "# @operation a\n# @service x.name\nmethod A(x: string) -> ()", IDLError(line: 5, column: 1, message: "@service x.name: 'x' is not a struct to look into")),
            (head + "# @operation a\n# @service x lookup\nmethod A(x: ?string) -> ()", IDLError(line: 5, column: 1, message: "@service x lookup: the looked-up parameter must be a required top-level string")),
            (head + "# @operation a\n# @service\nmethod A(x: string) -> ()", IDLError(line: 5, column: 1, message: "@service needs the parameter that names the service, e.g. @service service, @service login.service or @service flowId lookup")),
        ]
        for (text, expected) in cases {
            #expect(Self.failure(text) == expected, "\(text)")
            let server = Result { () throws(IDLError) in try ServerGenerator.generate(VarlinkIDL.parse(text), fileName: "bad.varlink") }
            #expect(throws: expected, "the server generator refuses it too") { try server.get() }
        }
    }

    /// Each method's case in the generated `handle` checks the policy for its operation and
    /// service before the body is called.
    @Test func theServerChecksEveryMethodsPolicyBeforeItsBody() throws {
        let source = try ServerGenerator.generate(VarlinkIDL.parse(Self.idl), fileName: "org.example.small.varlink")
        let expected = [
            "protocol SmallInterfaceServer: DaemonInterface {",
            "func get(_ request: SmallInterface.Get.Request, call: DaemonCall) throws -> Answer<SmallInterface.Get.Reply>",
            "func lookupService(_ value: String, for method: SmallInterface.Method, peer: PeerCredentials) -> String?",
            "return try .daemon(varlinkCall, interface: name, encode: { Self.errorReply(for: $0, item: $1) }) {",
            """
                        case .get:
                            let request = try SmallInterface.Get.Request(from: parameters)
                            let service = try checkedService(request.name, parameter: "name", method: SmallInterface.Method.get.rawValue)
                            try authorize("get", service: service, activity: true, peer: call.peer)
                            return try get(request, call: call).varlink
            """,
            // Nothing to decode for a check on the whole vault: it comes first.
            """
                        case .put:
                            try authorize("put", service: nil, activity: false, peer: call.peer)
                            return try put(SmallInterface.Put.Request(from: parameters), call: call).varlink
            """,
            """
                            let service = try (request.box?.name).map { try checkedService($0, parameter: "box.name", method: SmallInterface.Method.find.rawValue) }
                            try authorize("list", service: service, activity: false, peer: call.peer)
            """,
            """
                            let service = lookupService(request.ticket, for: .claim, peer: call.peer)
                            try authorize("put", service: service, activity: false, peer: call.peer, lookedUp: true)
                            return try claim(request, call: call).varlink
            """,
        ]
        for snippet in expected {
            #expect(source.contains(snippet), "missing:\n\(snippet)\nin:\n\(source)")
        }
        // Every case authorizes before it returns, once.
        let cases = source.components(separatedBy: "            case .").dropFirst()
        #expect(cases.count == 7)  // every method, the streamed Follow too
        for text in cases {
            let check = try #require(text.range(of: "try authorize("), "no policy check in: \(text)")
            let body = try #require(text.range(of: "return "), "no body in: \(text)")
            #expect(check.lowerBound < body.lowerBound, "\(text)")
            #expect(text.components(separatedBy: "try authorize(").count == 2)
        }
    }

    /// The policy's operation names, and which of them act on the whole vault or list, come from
    /// the methods' tags of every interface.
    @Test func thePolicysOperationsComeFromTheTags() throws {
        let source = try OperationsGenerator.generate([VarlinkIDL.parse(Self.idl)])
        #expect(source.contains(#"public static let knownOperations: [String] = ["get", "put", "odd", "list"]"#), "\(source)")
        #expect(source.contains(#"public static let vaultWideOperations: Set<String> = ["odd"]"#), "put has a looked-up service")
        #expect(source.contains(#"public static let listingOperations: Set<String> = ["list"]"#))
    }
}
