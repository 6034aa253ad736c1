import Foundation
import PackagePlugin

/// Generates the Swift face of each interface file (`interfaces/*.varlink`) at build time: its
/// types, methods, errors and secret paths, and the file itself byte for byte, so the repository
/// holds one copy of the contract. Runs `VarlinkIDL` (a host tool of this package: the IDL parser and generator)
/// whenever a file changes; needs no network, so it works in a fresh clone and in
/// `--static-swift-stdlib` release builds.
@main
struct GenerateInterfaceCode: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let directory = context.package.directoryURL.appending(path: "interfaces")
        let files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "varlink" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let outputDirectory = context.pluginWorkDirectoryURL
        return [
            .buildCommand(
                displayName: "Generating the Swift code of \(files.count) interfaces in \(target.name)",
                executable: try context.tool(named: "VarlinkIDL").url,
                arguments: [outputDirectory.path] + files.map(\.path),
                inputFiles: files,
                outputFiles: files.map { outputDirectory.appending(path: $0.deletingPathExtension().lastPathComponent + ".swift") }),
        ]
    }
}
