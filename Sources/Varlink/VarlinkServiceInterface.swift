/// `org.varlink.service`, which every varlink service provides: `GetInfo` and
/// `GetInterfaceDescription`.
struct VarlinkServiceInterface: VarlinkInterface {
    let info: VarlinkServiceInfo
    let interfaceNames: [String]
    let descriptions: [String: String]

    var name: String { "org.varlink.service" }
    var interfaceDescription: String { Self.description }

    func handle(_ call: VarlinkCall, context: VarlinkCallContext) throws -> VarlinkAnswer {
        switch call.member {
        case "GetInfo":
            return [
                "vendor": .string(info.vendor), "product": .string(info.product),
                "version": .string(info.version), "url": .string(info.url),
                "interfaces": .array(interfaceNames.map(JSONValue.string)),
            ]
        case "GetInterfaceDescription":
            let interface = try call.string("interface")
            guard let description = descriptions[interface] else { throw VarlinkError.interfaceNotFound(interface) }
            return ["description": .string(description)]
        default:
            throw VarlinkError.methodNotFound(call.method)
        }
    }

    static let description = """
        # The Varlink Service Interface is provided by every varlink service. It
        # describes the service and the interfaces it implements.
        interface org.varlink.service

        # Get a list of all the interfaces a service provides and information
        # about the implementation.
        method GetInfo() -> (
          vendor: string,
          product: string,
          version: string,
          url: string,
          interfaces: []string
        )

        # Get the description of an interface that is implemented by this service.
        method GetInterfaceDescription(interface: string) -> (description: string)

        # The requested interface was not found.
        error InterfaceNotFound (interface: string)

        # The requested method was not found
        error MethodNotFound (method: string)

        # The interface defines the requested method, but the service does not
        # implement it.
        error MethodNotImplemented (method: string)

        # One of the passed parameters is invalid.
        error InvalidParameter (parameter: string)

        # Client is denied access
        error PermissionDenied ()

        # Method is expected to be called with 'more' set to true, but wasn't
        error ExpectedMore ()

        """
}
