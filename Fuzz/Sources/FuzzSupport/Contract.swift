#if canImport(Glibc)
import Glibc
#endif
import CLibFuzzer

/// Runs libFuzzer with `body` as the function under test; never returns.
///
/// Each target's `main.swift` calls this instead of relying on libFuzzer's own `main`: SwiftPM
/// links an executable's `main.swift` as its entry point, and the alternative (`-parse-as-library`
/// for every module, as swift-protobuf's `FuzzTesting` does) breaks the parent package's
/// executables and build tools, which have top-level code.
public func runLibFuzzer(_ body: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> Never {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, body))
}

/// A broken contract: stops the process so libFuzzer records the input as a crash.
///
/// `precondition` would do the same in a debug build but says less; this names the target's rule
/// that the input broke, and is kept in every build mode.
public func require(_ condition: @autoclosure () -> Bool, _ rule: @autoclosure () -> String,
                    file: StaticString = #fileID, line: UInt = #line) {
    if !condition() { fatalError("fuzz contract broken: \(rule())", file: file, line: line) }
}

/// The fuzzer's input.
public func bytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> UnsafeRawBufferPointer {
    UnsafeRawBufferPointer(start: size > 0 ? data : nil, count: size)
}

/// The fuzzer's input as one byte that chooses a mode, and the rest.
public func split(_ data: UnsafePointer<UInt8>?, _ size: Int) -> (selector: UInt8, rest: [UInt8]) {
    let input = bytes(data, size)
    guard let first = input.first else { return (0, []) }
    return (first, Array(input.dropFirst()))
}
