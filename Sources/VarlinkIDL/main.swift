import Foundation  // a build tool (the IDL generator), never installed: FileHandle and file writing of full Foundation

/// VarlinkIDL OUTPUT-DIRECTORY FILE…: for each interface FILE (`org.sortedvault.vault.varlink`)
/// writes its Swift face to OUTPUT-DIRECTORY/org.sortedvault.vault.swift (see ``SwiftGenerator``),
/// after checking it against the varlink IDL grammar. Run by the GenerateInterfaceCode build-tool
/// plugin; a fault is a build error at the IDL's line and column.
let arguments = CommandLine.arguments.dropFirst()
guard let output = arguments.first, arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: VarlinkIDL OUTPUT-DIRECTORY FILE...\n".utf8))
    exit(64)
}
for path in arguments.dropFirst() {
    let url = URL(fileURLWithPath: path)
    let stem = url.deletingPathExtension().lastPathComponent
    let bytes = try [UInt8](Data(contentsOf: url))
    let source: String
    do throws(IDLError) {
        let text = String(decoding: bytes, as: UTF8.self)
        let interface = try VarlinkIDL.parse(text)
        try interface.checkReferences(in: text)
        guard stem == interface.name else {
            throw IDLError(line: 1, column: 1, message: "the file is named \(url.lastPathComponent), the interface \(interface.name)")
        }
        source = try SwiftGenerator.generate(interface, file: bytes, fileName: url.lastPathComponent)
    } catch {
        FileHandle.standardError.write(Data("\(path):\(error.line):\(error.column): error: \(error.message)\n".utf8))
        exit(1)
    }
    // Write only when changed, so that an unchanged interface does not rebuild the target.
    let destination = URL(fileURLWithPath: output).appending(path: stem + ".swift").path
    if (try? String(contentsOfFile: destination, encoding: .utf8)) != source {
        try source.write(toFile: destination, atomically: true, encoding: .utf8)
    }
}
