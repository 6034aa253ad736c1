import Foundation
import TestSupport
import Testing

extension DaemonSuite {
    /// Every ArgumentParser command names itself. Without `commandName`, ArgumentParser derives the
    /// name with `String(describing: Self.self)` for each command of the tree at every start, and each
    /// of those casts scans every protocol conformance record of the program: in `sortedvault-cli`
    /// that was 24 M of the 37 M instructions `--version` ran (valgrind's callgrind).
    @Suite struct CommandNameTests {
        /// Each command protocol of the sources: ArgumentParser's two and those refining them.
        static func commandProtocols(_ sources: [String]) -> Set<String> {
            var protocols: Set<String> = ["ParsableCommand", "AsyncParsableCommand"]
            let declaration = /protocol\s+(\w+)\s*:\s*([\w\s,&]+)\{/
            while true {
                let before = protocols.count
                for text in sources {
                    for match in text.matches(of: declaration) {
                        let refined = match.output.2.split(whereSeparator: { ",& \n".contains($0) }).map(String.init)
                        if refined.contains(where: protocols.contains) { protocols.insert(String(match.output.1)) }
                    }
                }
                if protocols.count == before { return protocols }
            }
        }

        /// The argument list of each `CommandConfiguration(…)` call in `text`, parentheses balanced.
        static func configurations(in text: String) -> [Substring] {
            var found: [Substring] = []
            var rest = text[...]
            while let start = rest.range(of: "CommandConfiguration(") {
                var depth = 1, index = start.upperBound
                while depth > 0, index < rest.endIndex {
                    if rest[index] == "(" { depth += 1 } else if rest[index] == ")" { depth -= 1 }
                    index = rest.index(after: index)
                }
                found.append(rest[start.upperBound..<index])
                rest = rest[index...]
            }
            return found
        }

        @Test func everyCommandOfEveryProgramSetsItsName() throws {
            let root = URL(fileURLWithPath: CLIHarness.repository + "/Sources")
            let files = try #require(FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)?
                .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" })
            let sources = try files.map { ($0.path, try String(contentsOf: $0, encoding: .utf8)) }
            let protocols = Self.commandProtocols(sources.map(\.1))
            #expect(protocols.isSuperset(of: ["ReportingCommand", "BlockingWorkCommand", "DockerAction"]), "\(protocols)")

            var commands = 0
            for (path, text) in sources {
                let file = path.dropFirst(root.path.count + 1)
                for arguments in Self.configurations(in: text) {
                    #expect(arguments.contains("commandName:"), "\(file): CommandConfiguration(\(arguments.prefix(60))…) names no command")
                }
                // A command type without a configuration of its own has a derived name too.
                let types = /(?:struct|enum|final class|class)\s+(\w+)\s*(?:<[^>]*>)?\s*:\s*([\w\s,&]+)\{/
                let declarations = text.matches(of: types)
                for (position, match) in declarations.enumerated() {
                    let conformances = match.output.2.split(whereSeparator: { ",& \n".contains($0) }).map(String.init)
                    guard conformances.contains(where: protocols.contains) else { continue }
                    commands += 1
                    let end = position + 1 < declarations.count ? declarations[position + 1].range.lowerBound : text.endIndex
                    let body = text[match.range.upperBound..<end]
                    #expect(body.contains("static let configuration") || body.contains("static var configuration"),
                            "\(file): \(match.output.1) has no configuration, so ArgumentParser derives its name")
                }
            }
            // The four programs' trees: sortedvault-cli, its two helpers and the fleet daemon.
            #expect(commands > 40, "found only \(commands) command types: the scan no longer sees them")
        }
    }
}
