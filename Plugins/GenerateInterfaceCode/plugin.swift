import Foundation
import PackagePlugin

/// Generates code from the interface files (`interfaces/*.varlink`) at build time, so the
/// repository holds one copy of the contract. Runs `VarlinkIDL` (a host tool of this package: the
/// IDL parser and generators) whenever a file changes; needs no network, so it works in a fresh
/// clone and in `--static-swift-stdlib` release builds. What it writes depends on the target:
///
/// - `VaultPolicy`: the operation names every method's `@operation` tag gives (`Operations.swift`);
/// - `VaultDaemon`: per interface, the server protocol and the dispatcher that checks each call's
///   policy before its body (`org.sortedvault.vault.server.swift`);
/// - any other target (`VaultAPI`): per interface, its types, methods, errors and secret paths,
///   and the file itself byte for byte (`org.sortedvault.vault.swift`).
@main
struct GenerateInterfaceCode: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let directory = context.package.directoryURL.appending(path: "interfaces")
        let files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "varlink" }
            // org.sortedvault.vault first: the policy's operation list (and its error messages) then
            // begins with the item operations.
            .sorted { $0.lastPathComponent > $1.lastPathComponent }
        let outputDirectory = context.pluginWorkDirectoryURL
        let stems = files.map { $0.deletingPathExtension().lastPathComponent }
        let (option, outputs): ([String], [String]) = switch target.name {
        case "VaultPolicy": (["--operations"], ["Operations.swift"])
        case "VaultDaemon": (["--server"], stems.map { $0 + ".server.swift" })
        default: ([], stems.map { $0 + ".swift" })
        }
        return [
            .buildCommand(
                displayName: "Generating \(option.first ?? "the types") of \(files.count) interfaces in \(target.name)",
                executable: try context.tool(named: "VarlinkIDL").url,
                arguments: option + [outputDirectory.path] + files.map(\.path),
                inputFiles: files,
                outputFiles: outputs.map { outputDirectory.appending(path: $0) }),
        ]
    }
}
