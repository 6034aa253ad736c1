/// Writes an interface's Swift face from its AST: the IDL's types as structs and enums, per method
/// a `Request` and a `Reply` with their codecs and secret paths, one error type per IDL error, and
/// the method names. The code it writes runs on VaultAPI's wire runtime (`WireParameters`,
/// `WireWriter`, `SecretLimits`).
///
/// Tags in the comment lines directly above a field or member steer what the IDL cannot say:
/// - `@secret limit` above a `string` field: the field is a secret, base64 of its bytes on the
///   wire and `SecureBytes` in Swift, diverted from the frame before it is parsed, at most
///   `WireLimits.limit` bytes decoded.
/// - `@handwritten` above a method: its Swift type is written by hand (its request does not fit
///   the IDL's types); only its name and its secrets are generated.
/// - `@operation`, `@service`, `@activity` and `@lists` above a method: what it means to the
///   daemon's policy (``MethodRole``); each method's type carries its `operation`.
/// - `@streams` above a method: it answers a stream (called with `more`); it gets no stub.
///
/// Beside the interface's enum it writes `…Caller` (`VaultInterfaceCaller`): a client conforms by
/// sending one call (`send`), and gets a typed stub per method, so a method added to the interface
/// file can be called with no client code of its own.
///
/// Anything else the generator cannot express fails with the IDL line and column, so that an
/// unsupported construct is a build error rather than a silently wrong codec.
public enum SwiftGenerator {
    /// The Swift type that holds an interface: `org.sortedvault.vault` → `VaultInterface`.
    public static func typeName(of interface: String) -> String {
        let last = interface.split(separator: ".").last.map(String.init) ?? interface
        return capitalized(last.split(whereSeparator: { $0 == "-" }).map { capitalized(String($0)) }.joined()) + "Interface"
    }

    /// The Swift source for `interface`; `file` is the interface file, embedded byte for byte.
    public static func generate(_ interface: IDLInterface, file: [UInt8], fileName: String) throws(IDLError) -> String {
        var generator = Generator(interface: interface)
        return try generator.run(file: file, fileName: fileName)
    }

    /// `text` as a Swift string literal (the IDL's names need no escapes).
    static func quotedString(_ text: String) -> String { "\"" + text + "\"" }

    static func capitalized(_ name: String) -> String {
        guard let first = name.first else { return name }
        return first.uppercased() + name.dropFirst()
    }

    static func lowerCamel(_ name: String) -> String {
        guard let first = name.first else { return name }
        return first.lowercased() + name.dropFirst()
    }
}

/// A tag line in a doc comment: `@name` or `@name argument`. (No parentheses: varlink's reference
/// parser finds a method's parameter list by its first `)`, even inside a comment.)
struct Tag {
    var name: String
    var argument: String?

    static func parse(_ line: String) -> Tag? {
        let text = line.drop(while: { $0 == " " })
        guard text.first == "@" else { return nil }
        let body = text.dropFirst()
        let name = body.prefix(while: { $0.isLetter })
        let argument = body[name.endIndex...].split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        return Tag(name: String(name), argument: argument.isEmpty ? nil : argument)
    }
}

private struct Generator {
    let interface: IDLInterface
    let swiftName: String
    /// Named types: true for an enum, false for a struct.
    var namedIsEnum: [String: Bool] = [:]
    var namedFields: [String: [IDLField]] = [:]
    var out: [String] = []
    /// Each method's role, by method name.
    var roles: [String: MethodRole] = [:]

    init(interface: IDLInterface) {
        self.interface = interface
        swiftName = SwiftGenerator.typeName(of: interface.name)
        for member in interface.members {
            guard case .type(let type) = member.kind else { continue }
            switch type {
            case .enumeration: namedIsEnum[member.name] = true
            case .structure(let fields):
                namedIsEnum[member.name] = false
                namedFields[member.name] = fields
            default: break
            }
        }
    }

    static let keywords: Set<String> = [
        "as", "associatedtype", "break", "case", "catch", "class", "continue", "default", "defer", "deinit", "do", "else",
        "enum", "extension", "fallthrough", "false", "fileprivate", "for", "func", "guard", "if", "import", "in", "init",
        "inout", "internal", "is", "let", "nil", "open", "operator", "private", "protocol", "public", "repeat", "rethrows",
        "return", "self", "Self", "static", "struct", "subscript", "super", "switch", "throw", "throws", "true", "try",
        "typealias", "var", "where", "while", "Type", "Protocol", "any", "some",
    ]

    static func identifier(_ name: String) -> String { keywords.contains(name) ? "`\(name)`" : name }

    static func quoted(_ text: String) -> String { "\"" + text + "\"" }

    mutating func line(_ indent: Int, _ text: String = "") {
        out.append(text.isEmpty ? "" : String(repeating: "    ", count: indent) + text)
    }

    mutating func doc(_ indent: Int, _ lines: [String]) {
        for text in lines where Tag.parse(text) == nil { line(indent, text.isEmpty ? "///" : "/// " + text) }
    }

    static func tags(_ doc: [String]) -> [Tag] { doc.compactMap(Tag.parse) }

    // MARK: Fields

    /// One field as Swift sees it.
    struct Field {
        var idl: IDLField
        var swiftType: String
        var optional: Bool
        var decoder: String
        var secretLimit: String?
        /// The nested enum an inline `(a, b)` type becomes.
        var inlineEnum: (name: String, values: [String])?
    }

    func fail(_ field: IDLField, _ message: String) -> IDLError {
        IDLError(line: field.line, column: field.column, message: message)
    }

    func field(_ idl: IDLField) throws(IDLError) -> Field {
        var secretLimit: String?
        for tag in Self.tags(idl.doc) {
            guard tag.name == "secret" else { throw fail(idl, "unknown tag '@\(tag.name)' on field '\(idl.name)'") }
            guard let limit = tag.argument, !limit.isEmpty, limit.allSatisfy({ $0.isLetter || $0.isNumber }) else {
                throw fail(idl, "@secret needs the name of its WireLimits size limit, e.g. @secret secretBytes")
            }
            secretLimit = limit
        }
        var base = idl.type
        var optional = false
        if case .optional(let inner) = base {
            base = inner
            optional = true
        }
        if secretLimit != nil, base != .string { throw fail(idl, "only a string field can be @secret") }
        let type: String
        let decoder: String
        var inlineEnum: (name: String, values: [String])?
        switch base {
        case .bool: (type, decoder) = ("Bool", optional ? "optionalBool" : "bool")
        case .int: (type, decoder) = ("Int64", optional ? "optionalInt" : "int")
        case .float: (type, decoder) = ("Double", optional ? "optionalDouble" : "double")
        case .string where secretLimit != nil: (type, decoder) = ("SecureBytes", optional ? "optionalSecret" : "secret")
        case .string: (type, decoder) = ("String", optional ? "optionalString" : "string")
        case .object: (type, decoder) = ("[String: JSONValue]", optional ? "optionalObject" : "object")
        case .named(let name) where namedIsEnum[name] == true:
            (type, decoder) = (name, optional ? "optionalEnumeration" : "enumeration")
        case .named(let name) where namedIsEnum[name] == false:
            (type, decoder) = (name, optional ? "optionalDecode" : "decode")
        case .enumeration(let values):
            let name = SwiftGenerator.capitalized(idl.name)
            inlineEnum = (name, values)
            (type, decoder) = (name, optional ? "optionalEnumeration" : "enumeration")
        case .array(.string): (type, decoder) = ("[String]", optional ? "optionalStrings" : "strings")
        case .array(.named(let name)) where namedIsEnum[name] == false:
            (type, decoder) = ("[\(name)]", optional ? "optionalDecodeArray" : "decodeArray")
        case .map(.string): (type, decoder) = ("[String: String]", optional ? "optionalStringMap" : "stringMap")
        case .structure:
            throw fail(idl, "an anonymous struct is not supported here: declare it as a type")
        default:
            throw fail(idl, "the type of '\(idl.name)' is not supported by the Swift generator")
        }
        return Field(idl: idl, swiftType: type, optional: optional, decoder: decoder, secretLimit: secretLimit, inlineEnum: inlineEnum)
    }

    // MARK: Secrets

    /// The secret paths below `prefix` of a struct with `fields`, with their limits.
    func secretPaths(_ fields: [IDLField], prefix: String, depth: Int = 0) throws(IDLError) -> [(String, String)] {
        var paths: [(String, String)] = []
        for idl in fields {
            let f = try field(idl)
            if let limit = f.secretLimit { paths.append((prefix + idl.name, limit)) }
            var base = idl.type
            if case .optional(let inner) = base { base = inner }
            switch base {
            case .named(let name):
                guard let nested = namedFields[name] else { continue }
                guard depth < VarlinkIDL.maximumDepth else { throw fail(idl, "types nest too deep to find their secrets") }
                paths += try secretPaths(nested, prefix: prefix + idl.name + ".", depth: depth + 1)
            case .array(.named(let name)), .map(.named(let name)):
                if let nested = namedFields[name], try !secretPaths(nested, prefix: "", depth: depth + 1).isEmpty {
                    throw fail(idl, "a secret inside an array or a map is not supported")
                }
            default: continue
            }
        }
        return paths
    }

    static func limits(_ paths: [(String, String)]) -> String {
        "SecretLimits([" + paths.map { "\(quoted($0.0)): WireLimits.\($0.1)" }.joined(separator: ", ") + "])"
    }

    // MARK: Output

    mutating func run(file: [UInt8], fileName: String) throws(IDLError) -> String {
        for method in try interface.methodRoles() { roles[method.member.name] = method.role }
        line(0, "// Generated from interfaces/\(fileName) at build time by the VarlinkIDL tool. Do not edit:")
        line(0, "// change the interface file.")
        line(0)
        line(0, "import BoundedJSON")
        line(0, "import VaultCrypto")
        line(0)
        doc(0, interface.doc)
        line(0, "public enum \(swiftName) {")
        line(1, "public static let name = \(Self.quoted(interface.name))")
        line(0)
        try methodNames()
        try callSecrets()
        for member in interface.members {
            switch member.kind {
            case .type(.enumeration(let values)):
                line(0)
                enumeration(1, member.name, values, doc: member.doc)
            case .type(.structure(let fields)):
                line(0)
                let secrets = try secretPaths(fields, prefix: "")
                try structure(1, member.name, fields, doc: member.doc, conformances: "WireCodable, Equatable",
                              head: secrets.isEmpty ? [] : [
                                  "/// The secret members, by dotted path below the object, with their size limits.",
                                  "public static var secretLimits: SecretLimits { \(Self.limits(secrets)) }",
                              ])
            case .type:
                throw IDLError(line: member.line, column: member.column, message: "type '\(member.name)' must be a struct or an enum")
            case .method, .error:
                continue
            }
        }
        try methodsAndErrors()
        line(0, "}")
        callerStubs()
        line(0)
        embed(file, fileName: fileName)
        return out.joined(separator: "\n") + "\n"
    }

    /// Each method's types, then each error's, then the error names.
    mutating func methodsAndErrors() throws(IDLError) {
        var shapes: [[IDLField]: String] = [:]
        for member in interface.members {
            guard case .method(let input, let output) = member.kind else { continue }
            line(0)
            try method(member, input: input, output: output, shapes: &shapes)
        }
        for member in interface.members {
            guard case .error(let fields) = member.kind else { continue }
            line(0)
            try structure(1, member.name, fields, doc: member.doc, conformances: "InterfaceError, Equatable",
                          head: ["public static let name = \(swiftName).name + \(Self.quoted("." + member.name))"])
        }
        try errorNames()
    }

    var methods: [IDLMember] { interface.members.filter { if case .method = $0.kind { true } else { false } } }
    var errors: [IDLMember] { interface.members.filter { if case .error = $0.kind { true } else { false } } }

    static func isHandwritten(_ member: IDLMember) -> Bool { tags(member.doc).contains { $0.name == "handwritten" } }

    mutating func methodNames() throws(IDLError) {
        line(1, "/// The interface's methods, by fully qualified name.")
        line(1, "public enum Method: String, CaseIterable, Sendable {")
        for member in methods {
            line(2, "case \(Self.identifier(SwiftGenerator.lowerCamel(member.name))) = \(Self.quoted(interface.name + "." + member.name))")
        }
        line(0)
        line(2, "/// The policy operation the daemon checks the call as (the method's operation tag).")
        line(2, "public var operation: String {")
        line(3, "switch self {")
        for member in methods {
            line(3, "case .\(Self.identifier(SwiftGenerator.lowerCamel(member.name))): \(Self.quoted(roles[member.name]!.operation))")
        }
        line(3, "}")
        line(2, "}")
        line(1, "}")
    }

    mutating func callSecrets() throws(IDLError) {
        var withSecrets: [String] = []
        for member in methods {
            guard case .method(let input, _) = member.kind else { continue }
            let secrets = try secretPaths(input, prefix: "")
            if Self.isHandwritten(member) || !secrets.isEmpty { withSecrets.append(member.name) }
        }
        line(0)
        line(1, "/// Every secret parameter of every call of the interface, for a server that must divert them")
        line(1, "/// from the frame before it knows the method.")
        let merged = withSecrets.isEmpty ? "SecretLimits.none"
            : "\(withSecrets[0]).requestSecrets" + withSecrets.dropFirst().map { ".merging(\($0).requestSecrets)" }.joined()
        line(1, "public static let callSecrets = \(merged)")
    }

    mutating func enumeration(_ indent: Int, _ name: String, _ values: [String], doc lines: [String]) {
        doc(indent, lines)
        line(indent, "public enum \(name): String, CaseIterable, Sendable {")
        for value in values { line(indent + 1, "case \(Self.identifier(value))") }
        line(indent, "}")
    }

    mutating func structure(_ indent: Int, _ name: String, _ idlFields: [IDLField], doc lines: [String], conformances: String,
                            head: [String] = []) throws(IDLError) {
        var fields: [Field] = []
        for idl in idlFields { fields.append(try field(idl)) }
        doc(indent, lines)
        line(indent, "public struct \(name): \(conformances) {")
        for text in head { line(indent + 1, text) }
        for f in fields {
            if let inline = f.inlineEnum {
                enumeration(indent + 1, inline.name, inline.values, doc: [])
            }
        }
        for f in fields {
            doc(indent + 1, f.idl.doc)
            line(indent + 1, "public var \(Self.identifier(f.idl.name)): \(f.swiftType)\(f.optional ? "?" : "")")
        }
        line(0)
        if fields.isEmpty {
            line(indent + 1, "public init() {}")
            line(indent + 1, "public init(from p: WireParameters) {}")
            line(indent + 1, "public func encodeMembers(to w: inout WireWriter) {}")
            line(indent, "}")
            return
        }
        let parameters = fields.map { "\(Self.identifier($0.idl.name)): \($0.swiftType)\(Self.defaultValue($0))" }
        line(indent + 1, "public init(\(parameters.joined(separator: ", "))) {")
        for f in fields { line(indent + 2, "self.\(f.idl.name) = \(Self.identifier(f.idl.name))") }
        line(indent + 1, "}")
        line(0)
        line(indent + 1, "public init(from p: WireParameters) throws(WireParameterError) {")
        for f in fields { line(indent + 2, "\(Self.identifier(f.idl.name)) = try p.\(f.decoder)(\(Self.quoted(f.idl.name)))") }
        line(indent + 1, "}")
        line(0)
        line(indent + 1, "public func encodeMembers(to w: inout WireWriter) {")
        for f in fields {
            let call = f.secretLimit == nil ? "field" : "secretField"
            line(indent + 2, "w.\(call)(\(Self.quoted(f.idl.name)), \(Self.identifier(f.idl.name)))")
        }
        line(indent + 1, "}")
        line(indent, "}")
    }

    /// Absent optionals and empty collections are the defaults a caller may leave out.
    static func defaultValue(_ field: Field) -> String {
        if field.optional { return "? = nil" }
        if field.swiftType.hasPrefix("[") { return field.swiftType.contains(":") ? " = [:]" : " = []" }
        return ""
    }

    mutating func method(_ member: IDLMember, input: [IDLField], output: [IDLField],
                         shapes: inout [[IDLField]: String]) throws(IDLError) {
        doc(1, member.doc)
        line(1, "public enum \(member.name): VarlinkMethod {")
        line(2, "public static let name = \(swiftName).name + \(Self.quoted("." + member.name))")
        line(2, "/// The policy operation the daemon checks the call as.")
        line(2, "public static let operation = \(Self.quoted(roles[member.name]!.operation))")
        if Self.isHandwritten(member) {
            line(1, "}")
            return
        }
        let requestSecrets = try secretPaths(input, prefix: "")
        if !requestSecrets.isEmpty { line(2, "public static var requestSecrets: SecretLimits { \(Self.limits(requestSecrets)) }") }
        let replySecrets = try secretPaths(output, prefix: "")
        if !replySecrets.isEmpty { line(2, "public static var replySecrets: SecretLimits { \(Self.limits(replySecrets)) }") }
        for (role, fields) in [("Request", input), ("Reply", output)] {
            // Lines and columns differ between two equal parameter lists; their shape does not.
            let shape = fields.map { IDLField(name: $0.name, type: $0.type, doc: $0.doc.filter { Tag.parse($0) != nil }) }
            if out.last?.hasSuffix("}") == true { line(0) }
            if fields.isEmpty {
                line(2, "public typealias \(role) = NoParameters")
            } else if let same = shapes[shape] {
                line(2, "public typealias \(role) = \(same)")
            } else {
                shapes[shape] = "\(member.name).\(role)"
                if out.last?.isEmpty == false { line(0) }
                try structure(2, role, fields, doc: [], conformances: "WireCodable, Equatable")
            }
        }
        line(1, "}")
    }

    mutating func errorNames() throws(IDLError) {
        line(0)
        line(1, "/// The interface's error names.")
        line(1, "public enum Errors {")
        for member in errors {
            line(2, "public static let \(Self.identifier(SwiftGenerator.lowerCamel(member.name))) = \(member.name).name")
        }
        line(2, "/// Every error type of the interface, to decode an error reply by its name.")
        line(2, "public static var all: [any InterfaceError.Type] { [\(errors.map { "\($0.name).self" }.joined(separator: ", "))] }")
        replyEnum()
        line(1, "}")
    }

    /// `Errors.Reply`: an error reply of the interface read by its type's generated decoder, one
    /// case per error, so a client's switch over it names every error the interface declares.
    mutating func replyEnum() {
        guard !errors.isEmpty else { return }
        line(0)
        line(2, "/// An error reply of the interface, read by its error type's decoder.")
        line(2, "public enum Reply: Sendable, Equatable {")
        for member in errors {
            line(3, "case \(Self.identifier(SwiftGenerator.lowerCamel(member.name)))(\(member.name))")
        }
        line(0)
        line(3, "/// The error `name` names, read from `parameters`; nil when the interface declares no")
        line(3, "/// such error, or the parameters are not of its shape.")
        line(3, "public init?(name: String, parameters: [String: JSONValue]) {")
        line(4, "switch name {")
        for member in errors {
            line(4, "case \(member.name).name:")
            line(5, "guard let error = \(member.name).decode(parameters) else { return nil }")
            line(5, "self = .\(Self.identifier(SwiftGenerator.lowerCamel(member.name)))(error)")
        }
        line(4, "default:")
        line(5, "return nil")
        line(4, "}")
        line(3, "}")
        line(2, "}")
    }

    static func streams(_ member: IDLMember) -> Bool { tags(member.doc).contains { $0.name == "streams" } }

    /// The caller protocol: one requirement, `send`, and a typed stub over it per method, except
    /// those written by hand (no request type) and those answered as a stream.
    mutating func callerStubs() {
        let caller = swiftName + "Caller"
        line(0)
        line(0, "/// A caller of `\(interface.name)`: ``send(_:_:)`` makes one call, and each of the interface's")
        line(0, "/// methods is a typed stub over it (but for a method written by hand or answered as a stream).")
        line(0, "public protocol \(caller): Sendable {")
        line(1, "/// Sends one call of `method` and answers its reply; an error reply is thrown.")
        line(1, "func send<M: VarlinkMethod & SendableMetatype>(_ method: M.Type, _ request: M.Request) async throws -> M.Reply")
        line(0, "}")
        line(0)
        line(0, "extension \(caller) {")
        for member in methods where !Self.isHandwritten(member) && !Self.streams(member) {
            let type = "\(swiftName).\(member.name)"
            if out.last != "extension \(caller) {" { line(0) }
            doc(1, member.doc)
            line(1, "public func \(Self.identifier(SwiftGenerator.lowerCamel(member.name)))(_ request: \(type).Request) async throws -> \(type).Reply {")
            line(2, "try await send(\(type).self, request)")
            line(1, "}")
        }
        line(0, "}")
    }

    mutating func embed(_ file: [UInt8], fileName: String) {
        line(0, "extension \(swiftName) {")
        line(1, "/// `interfaces/\(fileName)` byte for byte: the description the daemon serves.")
        line(1, "public static let file: [UInt8] = [")
        var index = 0
        while index < file.count {
            let chunk = file[index..<min(index + 24, file.count)].map { "0x" + String($0, radix: 16) }
            line(2, chunk.joined(separator: ", ") + ",")
            index += 24
        }
        line(1, "]")
        line(0, "}")
    }
}
