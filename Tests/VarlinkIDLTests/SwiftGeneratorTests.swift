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
        method Get(name: string) -> (box: Box, labels: []Label)

        method Put(
          name: string,
          # @secret passphraseBytes
          passphrase: string
        ) -> ()

        method Peek(name: string) -> (box: Box, labels: []Label)

        # @handwritten
        method Odd(anything: object) -> ()

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
            "public enum Odd: VarlinkMethod {\n        public static let name = SmallInterface.name + \".Odd\"\n    }",
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
        // No secret is ever declared as text.
        #expect(!source.contains("public var key: String"))
        #expect(!source.contains("public var passphrase: String"))
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
        let head = "interface org.example.bad\n"
        let cases: [(String, IDLError)] = [
            (head + "method A(x: (y: int)) -> ()", IDLError(line: 2, column: 10, message: "an anonymous struct is not supported here: declare it as a type")),
            (head + "method A(x: []int) -> ()", IDLError(line: 2, column: 10, message: "the type of 'x' is not supported by the Swift generator")),
            (head + "method A(\n  # @secret secretBytes\n  x: int\n) -> ()", IDLError(line: 4, column: 3, message: "only a string field can be @secret")),
            (head + "method A(\n  # @secret\n  x: string\n) -> ()", IDLError(line: 4, column: 3, message: "@secret needs the name of its WireLimits size limit, e.g. @secret secretBytes")),
            (head + "method A(\n  # @sekret x\n  x: string\n) -> ()", IDLError(line: 4, column: 3, message: "unknown tag '@sekret' on field 'x'")),
            (head + "type T (\n  # @secret secretBytes\n  s: string\n)\nmethod A(x: []T) -> ()", IDLError(line: 6, column: 10, message: "a secret inside an array or a map is not supported")),
        ]
        for (text, expected) in cases {
            #expect(Self.failure(text) == expected, "\(text)")
        }
    }
}
