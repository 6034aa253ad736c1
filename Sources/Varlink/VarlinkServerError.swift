/// Why a ``VarlinkServer`` could not start serving.
public struct VarlinkServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What happened and what to do about it.
    public let reason: String

    init(_ reason: String) {
        self.reason = reason
    }

    public var description: String { reason }

    static func socketInUse(_ path: String) -> VarlinkServerError {
        VarlinkServerError("Another server is already listening on \(path). Stop it first, or choose another socket path.")
    }

    static func pathOccupied(_ path: String) -> VarlinkServerError {
        VarlinkServerError("\(path) exists and is not a socket. Remove it, or choose another socket path.")
    }

    static func bindFailed(_ path: String, _ error: any Error) -> VarlinkServerError {
        VarlinkServerError("Cannot listen on \(path): \(error). Check that the directory exists and is writable.")
    }

    static func adoptFailed(_ descriptor: CInt, _ error: any Error) -> VarlinkServerError {
        VarlinkServerError("Cannot serve on inherited descriptor \(descriptor): \(error). It must be a listening Unix stream socket.")
    }

    static let shutDown = VarlinkServerError("The server was shut down; create a new VarlinkServer to serve again.")
}
