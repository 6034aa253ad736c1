/// Writes the daemon's side of an interface: a protocol with one requirement per method (the body:
/// typed request in, typed answer out) and the one `handle` that serves every call. `handle`
/// decodes the request, checks the caller against the policy for the method's `@operation` and
/// service (``MethodRole``), records activity, calls the body and maps its errors to the
/// interface's; a body cannot be reached without its check, and a method cannot be added without
/// its body (the protocol) and its operation (the tag).
///
/// The code it writes runs on the daemon's runtime (`DaemonInterface`, `DaemonCall`, `Answer`).
public enum ServerGenerator {
    /// The Swift source of the daemon's side of `interface`.
    public static func generate(_ interface: IDLInterface, fileName: String) throws(IDLError) -> String {
        var writer = ServerWriter(interface: interface, methods: try interface.methodRoles())
        writer.run(fileName: fileName)
        return writer.out.joined(separator: "\n") + "\n"
    }
}

private struct ServerWriter {
    let interface: IDLInterface
    let methods: [(member: IDLMember, input: [IDLField], role: MethodRole)]
    let types: String
    var out: [String] = []

    init(interface: IDLInterface, methods: [(member: IDLMember, input: [IDLField], role: MethodRole)]) {
        self.interface = interface
        self.methods = methods
        types = SwiftGenerator.typeName(of: interface.name)
    }

    var server: String { types + "Server" }
    var hasLookups: Bool { methods.contains { if case .lookup = $0.role.service { true } else { false } } }

    mutating func line(_ indent: Int, _ text: String = "") {
        out.append(text.isEmpty ? "" : String(repeating: "    ", count: indent) + text)
    }

    static func caseName(_ member: IDLMember) -> String { SwiftGenerator.lowerCamel(member.name) }

    mutating func run(fileName: String) {
        line(0, "// Generated from interfaces/\(fileName) at build time by the VarlinkIDL tool. Do not edit:")
        line(0, "// change the interface file.")
        line(0)
        line(0, "import Varlink")
        line(0, "import VaultAPI")
        line(0, "import VaultClient")
        line(0)
        requirements()
        line(0)
        dispatcher()
    }

    mutating func requirements() {
        line(0, "/// The bodies of `\(interface.name)`'s methods. The generated `handle` checks each call's policy")
        line(0, "/// before its body runs; a body only does the method's work.")
        line(0, "protocol \(server): DaemonInterface {")
        for method in methods {
            line(1, "/// `\(method.member.name)`: \(Self.summary(method.role)).")
            line(1, "func \(Self.caseName(method.member))(_ request: \(types).\(method.member.name).Request, call: DaemonCall) throws"
                + " -> Answer<\(types).\(method.member.name).Reply>")
        }
        if hasLookups {
            line(1, "/// The service a `@service … lookup` parameter stands for (a sign-in's flow ID), nil when none;")
            line(1, "/// a rule for some services then allows the call, so its body can say the thing is gone.")
            line(1, "func lookupService(_ value: String, for method: \(types).Method, peer: PeerCredentials) -> String?")
        }
        line(0, "}")
    }

    static func summary(_ role: MethodRole) -> String {
        var text = "operation `\(role.operation)`"
        switch role.service {
        case .none: text += " on the whole vault"
        case .field(let path, let optional):
            text += " on the service in `\(path.joined(separator: "."))`" + (optional.contains(true) ? " (every service when absent)" : "")
        case .lookup(let parameter): text += " on the service `\(parameter)` stands for"
        }
        if role.activity { text += "; holds off the auto-lock" }
        if role.lists { text += "; answers only with what the caller may see" }
        return text
    }

    mutating func dispatcher() {
        line(0, "extension \(server) {")
        line(1, "var name: String { \(types).name }")
        line(1, "var interfaceDescription: String { \(types)Description.text }")
        line(1, "var secretParameters: VarlinkSecretParameters? { .decoding(\(types).callSecrets) }")
        line(0)
        line(1, "/// Decodes, checks the policy, records activity, runs the body; errors become the interface's.")
        line(1, "func handle(_ varlinkCall: VarlinkCall, context: VarlinkCallContext) throws -> VarlinkAnswer {")
        line(2, "let call = DaemonCall(context: context, more: varlinkCall.more)")
        line(2, "return try .daemon(varlinkCall, interface: name, encode: { Self.errorReply(for: $0, item: $1) }) {")
        line(3, "(method: \(types).Method, parameters) in")
        line(3, "switch method {")
        for method in methods { dispatch(method.member, role: method.role) }
        line(3, "}")
        line(2, "}")
        line(1, "}")
        line(0, "}")
    }

    mutating func dispatch(_ member: IDLMember, role: MethodRole) {
        let name = Self.caseName(member)
        let request = "\(types).\(member.name).Request"
        let check = { (service: String) in
            "try authorize(\(SwiftGenerator.quotedString(role.operation)), service: \(service), activity: \(role.activity), peer: call.peer"
                + (service == "service" && role.serviceIsLookedUp ? ", lookedUp: true)" : ")")
        }
        line(3, "case .\(name):")
        switch role.service {
        case .none:
            // Nothing to read for the check: it comes before the parameters are even decoded.
            line(4, check("nil"))
            line(4, "return try \(name)(\(request)(from: parameters), call: call).varlink")
        case .field(let path, let optional):
            line(4, "let request = try \(request)(from: parameters)")
            let parameter = SwiftGenerator.quotedString(path.joined(separator: "."))
            if optional.contains(true) {
                // `a?.b` for each step that may be absent but the last, then one map over the result.
                var access = "request"
                for (index, step) in path.enumerated() { access += "." + step + (optional[index] && index < path.count - 1 ? "?" : "") }
                line(4, "let service = try (\(access)).map { try checkedService($0, parameter: \(parameter), method: \(types).Method.\(name).rawValue) }")
            } else {
                line(4, "let service = try checkedService(request.\(path.joined(separator: ".")), parameter: \(parameter), method: \(types).Method.\(name).rawValue)")
            }
            line(4, check("service"))
            line(4, "return try \(name)(request, call: call).varlink")
        case .lookup(let parameter):
            line(4, "let request = try \(request)(from: parameters)")
            line(4, "let service = lookupService(request.\(parameter), for: .\(name), peer: call.peer)")
            line(4, check("service"))
            line(4, "return try \(name)(request, call: call).varlink")
        }
    }
}

/// Writes the policy's list of operations from every interface's methods (`Operations.swift` of
/// `VaultPolicy`): the names a rule may use, which act on the whole vault, and which are listings.
public enum OperationsGenerator {
    public static func generate(_ interfaces: [IDLInterface]) throws(IDLError) -> String {
        var known: [String] = []
        var serviceScoped: Set<String> = []
        var listing: Set<String> = []
        for interface in interfaces {
            for method in try interface.methodRoles() {
                let operation = method.role.operation
                if !known.contains(operation) { known.append(operation) }
                if method.role.service != .none { serviceScoped.insert(operation) }
                if method.role.lists { listing.insert(operation) }
            }
        }
        let vaultWide = known.filter { !serviceScoped.contains($0) && !listing.contains($0) }
        func list(_ names: [String]) -> String { names.map(SwiftGenerator.quotedString).joined(separator: ", ") }
        return """
            // Generated from interfaces/*.varlink at build time by the VarlinkIDL tool. Do not edit:
            // change the methods' @operation, @service and @lists tags.

            extension Policy {
                /// The operation names a rule's `operations` list may use: every method's `@operation`, in
                /// the interface files' order. Policy files naming another are refused, so a typo such as
                /// "retreive" cannot silently grant nothing.
                public static let knownOperations: [String] = [\(list(known))]

                /// Operations on the whole vault, asked without a service (no method of theirs has a
                /// `@service`): only a rule whose services cover every service (`services = ["*"]`) allows or
                /// denies them.
                public static let vaultWideOperations: Set<String> = [\(list(vaultWide))]

                /// Operations that may be asked without a service and answer with what the caller may see
                /// (`@lists`): a rule for some services allows the call, and every entry is then checked with
                /// its own service; only a rule for every service denies the whole call.
                public static let listingOperations: Set<String> = [\(list(known.filter(listing.contains)))]
            }

            """
    }
}
