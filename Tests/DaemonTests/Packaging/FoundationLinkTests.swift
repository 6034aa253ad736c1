import Foundation
import TestSupport
import Testing

extension DaemonSuite {
    /// Which objects of each program's link refer to full Foundation, read by `nm` from the objects
    /// the build linked (`PROGRAM.product/Objects.LinkFileList`). One such reference brings full
    /// Foundation, CoreFoundation and ICU's 34 MB of data into a static release build; a reference
    /// can come from as little as `"a".contains("b")`, which picks Foundation's overload whenever a
    /// dependency imports Foundation (docs/install.md, "The Debian package").
    @Suite struct FoundationLinkTests {
        /// The third-party modules through which the fleet daemon links full Foundation: postgres-nio's
        /// `String(format:)` and SCRAM-SHA-256's `replacingOccurrences`, and NIOFoundationCompat's
        /// `JSONSerialization` and `RunLoop` extensions, which every user of it links.
        static let fleetDaemonsFoundationUsers: Set<String> = ["PostgresNIO", "NIOFoundationCompat"]

        /// Neither a reference nor a module that imports Foundation: an object that autolinks
        /// `-lFoundation` puts libFoundation.a on the link line, where FoundationEssentials' shared
        /// generic specializations resolve first, and those bring full Foundation and ICU with them
        /// (docs/install.md, measured: 81.2 MB).
        @Test(arguments: ["sortedvault", "sortedvault-cli"])
        func aOneHostProgramLinksNothingThatUsesFullFoundation(program: String) throws {
            let found = try Self.objectsUsingFoundation(program)
            #expect(found.isEmpty, "\(program) links full Foundation through: \(found)")
            let autolinking = try Self.objectsAutolinkingFoundation(program)
            #expect(autolinking.isEmpty, "objects of \(program) that autolink -lFoundation: \(autolinking)")
        }

        @Test func theFleetDaemonLinksFullFoundationOnlyThroughPostgresNIOAndNIOFoundationCompat() throws {
            let found = try Self.objectsUsingFoundation("sortedvault-fleet-daemon")
            let modules = Set(found.keys.map(Self.module(ofObject:)))
            #expect(modules == Self.fleetDaemonsFoundationUsers,
                    "modules of the fleet daemon that refer to full Foundation: \(found.filter { !Self.fleetDaemonsFoundationUsers.contains(Self.module(ofObject: $0.key)) })")
        }

        /// The toolchain links every static Swift program with `-export-dynamic`, which put each
        /// program's own symbols (41,000 in `sortedvault-cli`: 3.9 MB that strip cannot remove) in its
        /// dynamic symbol table; Package.swift's `--no-export-dynamic` comes after it on the link
        /// line. Nothing dlopens a program or looks a symbol up in it.
        @Test(arguments: ["sortedvault", "sortedvault-cli", "sortedvault-fleet-daemon"])
        func aProgramExportsNoSymbolOfItsOwn(program: String) throws {
            let buildDir = (CLIHarness.executable as NSString).deletingLastPathComponent
            let (status, out, err) = try Subprocess.run(["/usr/bin/readelf", "-W", "--dyn-syms", "\(buildDir)/\(program)"],
                                                        environment: ProcessInfo.processInfo.environment, input: Data())
            #expect(status == 0, "readelf: \(String(decoding: err, as: UTF8.self))")
            // `   Num:    Value          Size Type    Bind   Vis      Ndx Name`: Ndx is UND for what the
            // program imports, a section number for what it defines.
            var imported = 0
            var defined: [String] = []
            for line in String(decoding: out, as: UTF8.self).split(separator: "\n") {
                let fields = line.split(separator: " ")
                guard fields.count >= 8, fields[0].hasSuffix(":"), Int(fields[0].dropLast()) != nil else { continue }
                if fields[6] == "UND" { imported += 1 } else { defined.append(String(fields[7])) }
            }
            #expect(imported > 10, "readelf found \(imported) imported symbols in \(program)")
            // What stays is the linker's own (`_end`, `_edata`, `__bss_start`) and a C++ symbol that
            // libstdc++ also defines (exported so the library binds to the program's copy): a handful.
            let swiftSymbols = defined.filter { $0.hasPrefix("$s") }
            #expect(swiftSymbols.isEmpty, "\(program) exports \(swiftSymbols.count) Swift symbols, such as \(swiftSymbols.prefix(5))")
            #expect(defined.count <= 8, "\(program) exports \(defined.count) symbols of its own, such as \(defined.prefix(8))")
        }

        /// The release link lays out first the functions that packaging/request-path.order names
        /// (Package.swift): written by scripts/order-functions from what a running daemon executed, it
        /// must name functions the daemon still has. Specialized functions exist only in a release
        /// build; more than a third of the names are plain functions that this debug build defines too.
        @Test func theRequestPathOrderNamesFunctionsTheDaemonHas() throws {
            let order = try String(contentsOfFile: "\(CLIHarness.repository)/packaging/request-path.order", encoding: .utf8)
                .split(separator: "\n").map(String.init)
            #expect(order.count > 1_000, "packaging/request-path.order names \(order.count) functions")
            let buildDir = (CLIHarness.executable as NSString).deletingLastPathComponent
            let (status, out, err) = try Subprocess.run(["/usr/bin/nm", "--defined-only", "\(buildDir)/sortedvault-cli"],
                                                        environment: ProcessInfo.processInfo.environment, input: Data())
            #expect(status == 0, "nm: \(String(decoding: err, as: UTF8.self))")
            let defined = Set(String(decoding: out, as: UTF8.self).split(separator: "\n").compactMap { $0.split(separator: " ").last.map(String.init) })
            let found = order.filter(defined.contains)
            #expect(found.count * 3 > order.count, "\(found.count) of the \(order.count) functions packaging/request-path.order names are in sortedvault-cli")
            #expect(found.contains { $0.hasPrefix("$s7Varlink") } && found.contains { $0.hasPrefix("$s11VaultDaemon") },
                    "the order names none of the varlink server's or the daemon's functions")
        }

        /// The objects of `program`'s link whose autolink entries (what `import` adds to the link
        /// line) name `-lFoundation` itself, read by `readelf`.
        static func objectsAutolinkingFoundation(_ program: String) throws -> [String] {
            let objects = try linkedObjects(program)
            let (status, out, err) = try Subprocess.run(["/usr/bin/readelf", "-W", "-p", ".swift1_autolink_entries"] + objects,
                                                        environment: ProcessInfo.processInfo.environment, input: Data())
            // readelf says "section … was not dumped" (status 0) for an object without the section.
            #expect(status == 0, "readelf: \(String(decoding: err, as: UTF8.self))")
            var file = "", found: Set<String> = []
            var entries = 0
            for line in String(decoding: out, as: UTF8.self).split(separator: "\n") {
                if line.hasPrefix("File: ") { file = String(line.dropFirst(6)); continue }
                // `  [     0]  -lswiftCore`; entries of one object are separated by NUL, shown as lines.
                for entry in line.split(separator: " ") where entry.hasPrefix("-l") {
                    entries += 1
                    if entry == "-lFoundation" { found.insert(file) }
                }
            }
            #expect(entries > 10, "readelf found \(entries) autolink entries in \(program)'s objects")
            return found.sorted()
        }

        /// The objects the build linked into `program` (`PROGRAM.product/Objects.LinkFileList`).
        static func linkedObjects(_ program: String) throws -> [String] {
            let buildDir = (CLIHarness.executable as NSString).deletingLastPathComponent
            let list = try String(contentsOfFile: "\(buildDir)/\(program).product/Objects.LinkFileList", encoding: .utf8)
            let objects = list.split(separator: "\n").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "'\" ")) }.filter { !$0.isEmpty }
            #expect(objects.count > 10, "the link file list of \(program) names \(objects.count) objects")
            return objects
        }

        /// The objects of `program`'s link with an undefined symbol of the module `Foundation` (not
        /// FoundationEssentials), each with those symbols, demangled: mangled names abbreviate words,
        /// so only the demangled text says which module a symbol is in.
        static func objectsUsingFoundation(_ program: String) throws -> [String: [String]] {
            let objects = try linkedObjects(program)
            let environment = ProcessInfo.processInfo.environment
            let (status, out, err) = try Subprocess.run(["/usr/bin/nm", "--print-file-name", "--undefined-only"] + objects,
                                                        environment: environment, input: Data())
            #expect(status == 0, "nm: \(String(decoding: err, as: UTF8.self))")
            let candidates = String(decoding: out, as: UTF8.self).split(separator: "\n").filter { $0.contains("Foundation") }.joined(separator: "\n")
            let (demangled, demangledOut, demangleErr) = try Subprocess.run(["/usr/bin/env", "swift-demangle"], environment: environment,
                                                                            input: Data(candidates.utf8))
            #expect(demangled == 0, "swift-demangle: \(String(decoding: demangleErr, as: UTF8.self))")
            // `Foundation.X`, `(extension in Foundation)`, `… in Foundation`; never `FoundationEssentials`.
            let foundation = #/(^|[^A-Za-z_])Foundation(\.|\)|$)/#
            var found: [String: [String]] = [:]
            for line in String(decoding: demangledOut, as: UTF8.self).split(separator: "\n") {
                guard let colon = line.firstIndex(of: ":") else { continue }
                let symbol = line[line.index(after: colon)...].drop { $0 == " " || $0 == "U" }
                if symbol.contains(foundation) { found[String(line[..<colon]), default: []].append(String(symbol)) }
            }
            return found
        }

        /// `PostgresNIO` for `…/PostgresNIO.build/PostgresData.swift.o`.
        static func module(ofObject path: String) -> String {
            let directory = (path as NSString).deletingLastPathComponent
            return ((directory as NSString).lastPathComponent as NSString).deletingPathExtension
        }
    }
}
