import Foundation
import Testing
import VarlinkIDL

/// The IDL parser accepts every construct of the grammar and rejects bad files at the line and
/// column of the fault (the build tool turns that into a build error).
@Suite(.timeLimit(.minutes(20))) struct VarlinkIDLTests {
    static func error(_ text: String) -> IDLError? {
        do {
            let interface = try VarlinkIDL.parse(text)
            try interface.checkReferences(in: text)
            return nil
        } catch {
            return error
        }
    }

    @Test func everyConstruct() throws {
        let text = """
            # The interface's doc.
            interface org.example.all

            # A struct.
            type Thing (
              flag: bool,
              count: int,
              ratio: float,
              # a tag line
              name: string,
              any: object,
              maybe: ?string,
              list: []int,
              byName: [string]Thing,
              nested: (inner: ?[]string),
              kind: (red, green_light, blue),
              optionalList: ?[]?int
            )

            type Colour (red, green, blue)

            method Get(name: string) -> (thing: ?Thing, colour: Colour)
            method Ping() -> ()

            error NotFound (name: string)
            error Empty ()
            """
        let interface = try VarlinkIDL.parse(text)
        try interface.checkReferences(in: text)
        #expect(interface.name == "org.example.all")
        #expect(interface.doc == ["The interface's doc."])
        #expect(interface.members.map(\.name) == ["Thing", "Colour", "Get", "Ping", "NotFound", "Empty"])
        #expect(interface.members[0].doc == ["A struct."])
        guard case .type(.structure(let fields)) = interface.members[0].kind else {
            Issue.record("Thing is not a struct")
            return
        }
        #expect(fields.map(\.type) == [
            .bool, .int, .float, .string, .object, .optional(.string), .array(.int), .map(.named("Thing")),
            .structure([IDLField(name: "inner", type: .optional(.array(.string)), line: 15, column: 12)]),
            .enumeration(["red", "green_light", "blue"]),
            .optional(.array(.optional(.int))),
        ])
        #expect(fields[3].doc == ["a tag line"])
        #expect(fields[0].doc == [])
        #expect(interface.members[1].kind == .type(.enumeration(["red", "green", "blue"])))
        #expect(interface.members[2].kind == .method(
            input: [IDLField(name: "name", type: .string, line: 22, column: 12)],
            output: [IDLField(name: "thing", type: .optional(.named("Thing")), line: 22, column: 30),
                     IDLField(name: "colour", type: .named("Colour"), line: 22, column: 45)]))
        #expect(interface.members[3].kind == .method(input: [], output: []))
        #expect(interface.members[5].kind == .error([]))
    }

    /// The repository's own interfaces parse, and every type they name is declared.
    @Test(arguments: ["org.sortedvault.vault", "org.sortedvault.session"])
    func repositoryInterfaces(name: String) throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appending(path: "interfaces/\(name).varlink")
        let text = try String(contentsOf: url, encoding: .utf8)
        let interface = try VarlinkIDL.parse(text)
        try interface.checkReferences(in: text)
        #expect(interface.name == name)
        #expect(interface.members.contains { if case .method = $0.kind { true } else { false } })
    }

    @Test func faultsAtLineAndColumn() {
        let head = "interface org.example.bad\n"
        let cases: [(String, IDLError)] = [
            ("", IDLError(line: 1, column: 1, message: "expected 'interface'")),
            ("interface thing\nmethod A() -> ()", IDLError(line: 1, column: 11, message: "'thing' is not a valid interface name (reverse domain, e.g. org.example.thing)")),
            (head + "method A() -> ()\ntype B (x: int", IDLError(line: 3, column: 15, message: "expected ')'")),
            (head + "method A() -> ()\ntype B (x: integer)", IDLError(line: 3, column: 12, message: "unknown type 'integer'")),
            (head + "method A() -> ()\ntype b (x: int)", IDLError(line: 3, column: 6, message: "'b' is not a valid type name (an upper-case letter, then letters and digits)")),
            (head + "method A() -> ()\nmethod A() -> ()", IDLError(line: 3, column: 1, message: "'A' is declared twice")),
            (head + "method A(x: int, x: int) -> ()", IDLError(line: 2, column: 18, message: "'x' appears twice")),
            (head + "method A() -> ()\nconst B (x: int)", IDLError(line: 3, column: 1, message: "expected 'type', 'method' or 'error'")),
            (head + "method A() ()", IDLError(line: 2, column: 12, message: "expected '->'")),
            (head + "method A(x: ??int) -> ()", IDLError(line: 2, column: 14, message: "an optional of an optional is not allowed")),
            (head + "method A(x: [int]int) -> ()", IDLError(line: 2, column: 14, message: "expected 'string'")),
            (head + "method A(red, green) -> ()", IDLError(line: 2, column: 10, message: "expected 'name: type' (an enum is not allowed here)")),
            (head + "method A(x: Missing) -> ()", IDLError(line: 2, column: 1, message: "type 'Missing' is not declared")),
            (head + "type B (x: int)", IDLError(line: 2, column: 16, message: "an interface needs at least one method")),
            (head + "method A(x: int, y) -> ()", IDLError(line: 2, column: 19, message: "expected ':' after field 'y'")),
            (head + "method A(x__y: int) -> ()", IDLError(line: 2, column: 10, message: "'x__y' is not a valid field name")),
        ]
        for (text, expected) in cases {
            #expect(Self.error(text) == expected, "\(text)")
        }
    }

    /// Nesting is bounded, so a hostile file cannot exhaust the stack.
    @Test func nestingIsBounded() {
        let deep = "interface org.example.deep\nmethod A(x: " + String(repeating: "[]", count: 100) + "int) -> ()"
        #expect(Self.error(deep)?.message == "types nested deeper than \(VarlinkIDL.maximumDepth)")
        let big = "interface org.example.big\n" + String(repeating: "#", count: VarlinkIDL.maximumBytes)
        #expect(Self.error(big)?.message == "interface file larger than \(VarlinkIDL.maximumBytes) bytes")
    }
}
