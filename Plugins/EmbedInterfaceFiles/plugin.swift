import Foundation
import PackagePlugin

/// Embeds the interface files (`interfaces/*.varlink`) in the target as byte arrays at build time,
/// so the daemon serves the files themselves and the repository holds one copy of the contract.
/// Runs `embed-interface-files` (a host tool of this package) whenever a file changes; needs no
/// network, so it works in a fresh clone and in `--static-swift-stdlib` release builds.
@main
struct EmbedInterfaceFiles: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let directory = context.package.directoryURL.appending(path: "interfaces")
        let files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "varlink" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let output = context.pluginWorkDirectoryURL.appending(path: "InterfaceFiles.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(files.count) interface files in \(target.name)",
                executable: try context.tool(named: "embed-interface-files").url,
                arguments: [output.path] + files.map(\.path),
                inputFiles: files,
                outputFiles: [output]),
        ]
    }
}
