import Foundation
import TestSupport

/// The shipped systemd units, read the way systemd reads them (for what the tests check): sections,
/// `Key=Value` lines, `#`/`;` comments, repeated keys kept in order. Specifiers are expanded only
/// where a test says what they stand for.
struct SystemdUnitFile {
    let path: String
    private var entries: [(section: String, key: String, value: String)] = []

    init(shipped name: String) throws {
        try self.init(path: CLIHarness.repository + "/systemd/" + name)
    }

    init(path: String) throws {
        self.path = path
        var section = ""
        for raw in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") && line.hasSuffix("]") {
                section = String(line.dropFirst().dropLast())
                continue
            }
            guard let equals = line.firstIndex(of: "=") else { throw HarnessError("\(path): not a Key=Value line: \(line)") }
            entries.append((section, line[..<equals].trimmingCharacters(in: .whitespaces),
                            line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)))
        }
    }

    /// Every value of `key` in `section`, in order.
    func values(_ section: String, _ key: String) -> [String] {
        entries.filter { $0.section == section && $0.key == key }.map(\.value)
    }

    /// The value that wins (the last one), if any.
    func value(_ section: String, _ key: String) -> String? { values(section, key).last }

    /// The address families `RestrictAddressFamilies=` leaves usable, as systemd.exec(5) combines the
    /// lines: an empty value resets, a leading `~` turns the line into a deny list. Nil: no restriction.
    func allowedAddressFamilies() -> (allowList: Bool, families: Set<String>)? {
        var result: (allowList: Bool, families: Set<String>)?
        for value in values("Service", "RestrictAddressFamilies") {
            if value.isEmpty { result = nil; continue }
            let deny = value.hasPrefix("~")
            let families = Set((deny ? String(value.dropFirst()) : value).split(separator: " ").map(String.init))
            switch (result, deny) {
            case (nil, _): result = (!deny, families)
            case let (current?, false): result = current.allowList ? (true, current.families.union(families)) : (false, current.families.subtracting(families))
            case let (current?, true): result = current.allowList ? (true, current.families.subtracting(families)) : (false, current.families.union(families))
            }
        }
        return result
    }
}
