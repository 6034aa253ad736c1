import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The harness's children inherit descriptors 0, 1 and 2 only. A long-lived child (a keyring, a
/// daemon, a provider) that inherited another test's socket kept it open after its owner closed it:
/// the peer never saw the close, and unrelated Varlink tests timed out when they ran beside the
/// Secret Service suite (`swift test --filter "VarlinkTests|Interop"` failed every time).
@Suite(.timeLimit(.minutes(20))) struct SubprocessTests {
    @Test func aChildInheritsNoDescriptorButItsStandardStreams() throws {
        // As NIO's accepted sockets are: open without close-on-exec.
        let leaked = open("/dev/null", O_RDONLY)
        #expect(leaked > 2)
        defer { close(leaked) }
        let (status, output, _) = try Subprocess.run(["/bin/sh", "-c", "ls /proc/$$/fd"], environment: [:], input: Data())
        #expect(status == 0)
        let descriptors = String(decoding: output, as: UTF8.self).split(separator: "\n").compactMap { Int32($0) }
        #expect(!descriptors.contains(leaked), "the child inherited descriptor \(leaked): \(descriptors)")
        #expect(Set(descriptors) == [0, 1, 2], "descriptors in the child: \(descriptors)")
    }
}
