#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// The least a CLI needs to retrieve an item: one blocking Unix-socket connection, one varlink call,
// read up to the NUL, write the reply to stdout. No Foundation, no NIO, no threads.
func fail(_ message: String) -> Never {
    let line = Array("varlink-min: \(message)\n".utf8)
    line.withUnsafeBytes { _ = write(2, $0.baseAddress!, $0.count) }
    exit(1)
}
guard let runtime = getenv("XDG_RUNTIME_DIR") else { fail("XDG_RUNTIME_DIR is not set") }
let path = String(cString: runtime) + "/sortedvault/socket"
let args = CommandLine.arguments
let service = args.count > 2 ? args[1] : "bench"
let account = args.count > 2 ? args[2] : "cli"

let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
guard fd >= 0 else { fail("socket: \(errno)") }
var address = sockaddr_un()
address.sun_family = sa_family_t(AF_UNIX)
let pathBytes = Array(path.utf8)
guard pathBytes.count < MemoryLayout.size(ofValue: address.sun_path) else { fail("socket path too long") }
withUnsafeMutableBytes(of: &address.sun_path) { raw in
    raw.copyBytes(from: pathBytes)
    raw[pathBytes.count] = 0
}
let connected = withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
}
guard connected == 0 else { fail("connect \(path): errno \(errno)") }

// Service and account are plain identifiers here; the real client must JSON-escape them.
let call = Array(#"{"method":"org.sortedvault.vault.Retrieve","parameters":{"service":"\#(service)","account":"\#(account)"}}"#.utf8) + [0]
var sent = 0
while sent < call.count {
    let n = call.withUnsafeBytes { write(fd, $0.baseAddress! + sent, $0.count - sent) }
    guard n > 0 else { fail("write: errno \(errno)") }
    sent += n
}
var reply = [UInt8]()
var chunk = [UInt8](repeating: 0, count: 16384)
readLoop: while true {
    let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
    guard n > 0 else { fail("read: connection closed before the reply ended") }
    for index in 0..<n {
        if chunk[index] == 0 { break readLoop }
        reply.append(chunk[index])
    }
}
close(fd)
guard reply.starts(with: Array(#"{"parameters""#.utf8)) || !reply.starts(with: Array(#"{"error""#.utf8)) else {
    fail("the daemon answered with an error")
}
reply.withUnsafeBytes { _ = write(1, $0.baseAddress!, $0.count) }
_ = write(1, "\n", 1)
