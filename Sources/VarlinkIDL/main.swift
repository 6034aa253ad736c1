import Foundation  // a build tool (the IDL generator), never installed: FileHandle and file writing of full Foundation

/// VarlinkIDL [--server | --operations] OUTPUT-DIRECTORY FILE…: checks each interface FILE
/// (`org.sortedvault.vault.varlink`) against the varlink IDL grammar and its tags, then writes
///
/// - by default, its Swift face to OUTPUT-DIRECTORY/org.sortedvault.vault.swift (``SwiftGenerator``);
/// - with `--server`, the daemon's protocol and dispatcher to org.sortedvault.vault.server.swift
///   (``ServerGenerator``);
/// - with `--operations`, the policy's operation lists of all the files to Operations.swift
///   (``OperationsGenerator``).
///
/// Run by the GenerateInterfaceCode build-tool plugin; a fault is a build error at the IDL's line
/// and column.
enum Mode: String { case types, server, operations }

var arguments = Array(CommandLine.arguments.dropFirst())
var mode = Mode.types
if let flag = arguments.first, flag.hasPrefix("--") {
    guard let chosen = Mode(rawValue: String(flag.dropFirst(2))), chosen != .types else {
        FileHandle.standardError.write(Data("VarlinkIDL: unknown option \(flag)\n".utf8))
        exit(64)
    }
    mode = chosen
    arguments.removeFirst()
}
guard let output = arguments.first, arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: VarlinkIDL [--server | --operations] OUTPUT-DIRECTORY FILE...\n".utf8))
    exit(64)
}

/// Writes `source` to `directory`/`name` only when it changed, so that an unchanged interface does
/// not rebuild the target.
func write(_ source: String, named name: String, in directory: String) throws {
    let destination = URL(fileURLWithPath: directory).appending(path: name).path
    if (try? String(contentsOfFile: destination, encoding: .utf8)) != source {
        try source.write(toFile: destination, atomically: true, encoding: .utf8)
    }
}

/// Checks and generates every file; the exit status. Everything it parsed is released when it
/// returns (the fuzz build runs this tool under LeakSanitizer, which counts what is still held at
/// exit by nothing).
func generate(_ mode: Mode, into output: String, files: ArraySlice<String>) throws -> Int32 {
    var interfaces: [IDLInterface] = []
    for path in files {
        let url = URL(fileURLWithPath: path)
        let stem = url.deletingPathExtension().lastPathComponent
        let bytes = try [UInt8](Data(contentsOf: url))
        let source: String?
        do throws(IDLError) {
            let text = String(decoding: bytes, as: UTF8.self)
            let interface = try VarlinkIDL.parse(text)
            try interface.checkReferences(in: text)
            guard stem == interface.name else {
                throw IDLError(line: 1, column: 1, message: "the file is named \(url.lastPathComponent), the interface \(interface.name)")
            }
            switch mode {
            case .types: source = try SwiftGenerator.generate(interface, file: bytes, fileName: url.lastPathComponent)
            case .server: source = try ServerGenerator.generate(interface, fileName: url.lastPathComponent)
            case .operations:
                _ = try interface.methodRoles()
                interfaces.append(interface)
                source = nil
            }
        } catch {
            FileHandle.standardError.write(Data("\(path):\(error.line):\(error.column): error: \(error.message)\n".utf8))
            return 1
        }
        if let source { try write(source, named: stem + (mode == .server ? ".server.swift" : ".swift"), in: output) }
    }
    if mode == .operations {
        // Every file's methods were checked above: combining them cannot fail.
        try write(OperationsGenerator.generate(interfaces), named: "Operations.swift", in: output)
    }
    return 0
}

exit(try generate(mode, into: output, files: arguments.dropFirst()))
