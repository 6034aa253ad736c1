/// What a method means to the daemon, read from the tags in the comment above it:
///
/// - `@operation NAME` (required): the policy operation the call is checked as, e.g. `retrieve`;
///   policy files name it, and `Policy.knownOperations` is the list of every method's.
/// - `@service PATH`: the parameter, a dotted path through the request's structs, whose string
///   names the service the policy decides for (an optional one asks for every service when
///   absent). Without it the operation acts on the whole vault (only a rule for every service
///   decides it).
/// - `@service PARAMETER lookup`: the service is what the daemon finds under that parameter (a
///   sign-in's flow ID); when nothing is found (the flow has ended), a rule for some services allows
///   the call, so its body can say so, and a program with no rule for the operation is refused.
/// - `@activity`: an allowed call holds off the auto-lock.
/// - `@lists`: asked without a service, the call answers only with what the caller may see, so a
///   rule for some services allows it (its operation is then a listing operation).
/// - `@streams`: the method answers a stream of replies (it is called with `more`), so callers
///   get no single-reply stub for it (``SwiftGenerator``'s `…Caller` protocol).
///
/// A method without `@operation`, or with a tag the generator does not know, is an error at the
/// method's line and column: no method can reach the daemon without its policy.
public struct MethodRole: Equatable, Sendable {
    public enum Service: Equatable, Sendable {
        /// The whole vault: no service.
        case none
        /// The string at `path` in the request; `optional` says which steps of the path may be absent.
        case field(path: [String], optional: [Bool])
        /// Looked up by the daemon from the string parameter `parameter`.
        case lookup(parameter: String)
    }

    public var operation: String
    public var service: Service
    public var serviceIsLookedUp: Bool { if case .lookup = service { true } else { false } }
    public var activity: Bool
    public var lists: Bool

    /// The tags a method may carry.
    static let methodTags: Set<String> = ["operation", "service", "activity", "lists", "handwritten", "streams"]

    /// The role of `member`, a method whose parameters are `input`, in an interface whose named
    /// structs have `structs`' fields.
    public static func of(_ member: IDLMember, input: [IDLField], structs: [String: [IDLField]]) throws(IDLError) -> MethodRole {
        func fail(_ message: String) -> IDLError { IDLError(line: member.line, column: member.column, message: message) }
        var operation: String?
        var service = Service.none
        var activity = false
        var lists = false
        for tag in member.doc.compactMap(Tag.parse) {
            switch tag.name {
            case "operation":
                guard let name = tag.argument, isOperationName(name) else {
                    throw fail("@operation needs a policy operation name of lower-case letters, digits, '.' and '-', e.g. @operation retrieve")
                }
                guard operation == nil else { throw fail("method '\(member.name)' has two @operation tags") }
                operation = name
            case "service": service = try serviceTag(tag.argument, input: input, structs: structs, fail: fail)
            case "activity": activity = true
            case "lists": lists = true
            case "handwritten", "streams": continue
            default: throw fail("unknown tag '@\(tag.name)' on method '\(member.name)'; a method knows \(methodTags.sorted().map { "@" + $0 }.joined(separator: ", "))")
            }
        }
        guard let operation else {
            throw fail("method '\(member.name)' has no @operation tag: say which policy operation checks it, e.g. '# @operation retrieve' above the method")
        }
        return MethodRole(operation: operation, service: service, activity: activity, lists: lists)
    }

    static func isOperationName(_ name: String) -> Bool {
        guard let first = name.first, first.isASCII, first.isLowercase else { return false }
        return name.allSatisfy { ($0.isASCII && ($0.isLowercase || $0.isNumber)) || $0 == "." || $0 == "-" }
    }

    /// `@service PATH` or `@service PARAMETER lookup`, checked against the request's fields.
    static func serviceTag(_ argument: String?, input: [IDLField], structs: [String: [IDLField]],
                           fail: (String) -> IDLError) throws(IDLError) -> Service {
        let words = argument?.split(separator: " ").map(String.init) ?? []
        guard let path = words.first, words.count == 1 || (words.count == 2 && words[1] == "lookup") else {
            throw fail("@service needs the parameter that names the service, e.g. @service service, @service login.service or @service flowId lookup")
        }
        let components = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var fields = input
        var optional: [Bool] = []
        for (index, name) in components.enumerated() {
            guard let field = fields.first(where: { $0.name == name }) else {
                throw fail("@service \(path): the request has no parameter '\(components[...index].joined(separator: "."))'")
            }
            var type = field.type
            if case .optional(let inner) = type { type = inner }
            optional.append(type != field.type)
            if index == components.count - 1 {
                guard type == .string else { throw fail("@service \(path): the service must be a string parameter") }
            } else {
                guard case .named(let name) = type, let nested = structs[name] else {
                    throw fail("@service \(path): '\(name)' is not a struct to look into")
                }
                fields = nested
            }
        }
        if words.count == 2 {
            guard components.count == 1, optional == [false] else { throw fail("@service \(path) lookup: the looked-up parameter must be a required top-level string") }
            return .lookup(parameter: path)
        }
        return .field(path: components, optional: optional)
    }
}

extension IDLInterface {
    /// The fields of the interface's named structs.
    var structFields: [String: [IDLField]] {
        var fields: [String: [IDLField]] = [:]
        for member in members {
            if case .type(.structure(let members)) = member.kind { fields[member.name] = members }
        }
        return fields
    }

    /// Every method with its parameters and role, in the file's order.
    public func methodRoles() throws(IDLError) -> [(member: IDLMember, input: [IDLField], role: MethodRole)] {
        let structs = structFields
        var roles: [(member: IDLMember, input: [IDLField], role: MethodRole)] = []
        for member in members {
            guard case .method(let input, _) = member.kind else { continue }
            roles.append((member, input, try MethodRole.of(member, input: input, structs: structs)))
        }
        return roles
    }
}
