extension Rule {
    static let knownKeys = ["name", "effect", "uids", "gids", "executables", "operations", "services"]

    /// Validates one `[[rule]]` table and compiles it, resolving "@self" to `daemonUID`.
    init(_ reader: TOMLTableReader, daemonUID: UInt32) throws {
        try reader.rejectUnknownKeys(Self.knownKeys)

        let name = try reader.string("name", reader.required("name", example: "\"owner-full-access\""), example: "\"owner-full-access\"")
        if name.isEmpty || !name.unicodeScalars.allSatisfy(Self.isNameCharacter) {
            throw reader.invalid("name", "rule name \(name.debugDescription) may contain only letters A-Z a-z, digits, '.', '_' and '-'")
        }

        let effectText = try reader.string("effect", reader.required("effect", example: "\"allow\""), example: "\"allow\"")
        guard let effect = Effect(rawValue: effectText) else {
            throw reader.invalid("effect", "effect \(effectText.debugDescription) is not valid; write effect = \"allow\" or effect = \"deny\"")
        }

        let operations = try reader.array("operations", reader.required("operations", example: "[\"retrieve\"]"), example: "[\"retrieve\"]")
        let services = try reader.array("services", reader.required("services", example: "[\"*\"]"), example: "[\"com.example.*\"]")

        self.reference = RuleReference(name: name, file: reader.file, line: reader.table.line)
        self.effect = effect
        self.uids = try Self.ids("uids", reader, daemonUID: daemonUID)
        self.gids = try Self.ids("gids", reader, daemonUID: nil)
        self.executables = try Self.executables(reader)
        self.operations = try operations.map { value in
            let pattern = try reader.string("operations", value, example: "\"retrieve\"")
            guard Policy.isValidOperationPattern(pattern) else {
                throw reader.invalid("operations", "unknown operation \(pattern.debugDescription); use \"*\", a prefix such as \"session.*\", or one of: \(Policy.knownOperations.joined(separator: ", "))")
            }
            return Glob(pattern)
        }
        self.services = try services.map { value in
            let pattern = try reader.string("services", value, example: "\"com.example.*\"")
            if pattern.isEmpty { throw reader.invalid("services", "an empty service pattern matches nothing; use \"*\" for any service") }
            if pattern.unicodeScalars.contains(where: Self.isControl) {
                throw reader.invalid("services", "service pattern \(pattern.debugDescription) contains a control character; service names never do")
            }
            return Glob(pattern)
        }
    }

    private static func isNameCharacter(_ c: Unicode.Scalar) -> Bool {
        switch c {
        case "A"..."Z", "a"..."z", "0"..."9", ".", "_", "-": true
        default: false
        }
    }

    private static func isControl(_ c: Unicode.Scalar) -> Bool {
        c.value < 0x20 || (0x7F...0x9F).contains(c.value)
    }

    /// `uids` or `gids`: integers, "*" (any) and, for uids, "@self". `nil` = any.
    private static func ids(_ key: String, _ reader: TOMLTableReader, daemonUID: UInt32?) throws -> Set<UInt32>? {
        guard let value = try reader.value(key) else { return nil }
        let example = daemonUID == nil ? "[100, \"*\"]" : "[\"@self\", 1000]"
        var ids = Set<UInt32>()
        var any = false
        for element in try reader.array(key, value, example: example) {
            switch element {
            case .integer(let number):
                guard let id = UInt32(exactly: number) else {
                    throw reader.invalid(key, "\(number) in '\(key)' is not a valid id; ids are 0…\(UInt32.max)")
                }
                ids.insert(id)
            case .string("*"):
                any = true
            case .string("@self") where daemonUID != nil:
                ids.insert(daemonUID!)
            case .string(let text):
                let allowed = daemonUID == nil ? "numbers or \"*\"" : "numbers, \"@self\" or \"*\""
                throw reader.invalid(key, "\(text.debugDescription) in '\(key)' is not valid; use \(allowed)")
            default:
                throw reader.typeError(key, element, expected: "a list of ids such as \(example)")
            }
        }
        return any ? nil : ids
    }

    private static func executables(_ reader: TOMLTableReader) throws -> [Glob]? {
        guard let value = try reader.value("executables") else { return nil }
        return try reader.array("executables", value, example: "[\"/usr/bin/*\"]").map { element in
            let pattern = try reader.string("executables", element, example: "\"/usr/bin/sorted-cli\"")
            guard pattern.hasPrefix("/") else {
                throw reader.invalid("executables", "executable pattern \(pattern.debugDescription) must be an absolute path such as \"/usr/bin/*\"; remove 'executables' to allow any program")
            }
            if pattern.unicodeScalars.contains(where: isControl) {
                throw reader.invalid("executables", "executable pattern \(pattern.debugDescription) contains a control character")
            }
            return Glob(pattern)
        }
    }
}
