import BoundedJSON
import VaultCrypto

/// The plaintext inside a backup (docs/backup.md): JSON lines, written and read only here. The first
/// line is a ``VaultInterface/BackupHeader``; each other line is one item,
/// `{"item": Item, "secret": base64}`, or one login, `{"login": BackupLogin}` — the types of the
/// interface files, so the format is the IDL's and cannot drift from it.
///
/// ```swift
/// var writer = BackupDocument.Writer(header: .init(format: BackupDocument.format, version: 1, created: now, items: 1, logins: 0))
/// writer.item(item, secret: secret)
/// let plaintext = writer.finish()                       // WireBytes: wiped when released
/// let backup = try BackupDocument(plaintext: opened)    // opened: SecureBytes from AgeDecryptor
/// for line in backup.lines { … }
/// ```
public struct BackupDocument: Sendable {
    public static let format = "org.sortedvault.backup"
    public static let version: Int64 = 1
    /// The deepest nesting a line may have (a login's provider is the deepest member).
    static let maximumDepth = 8

    public enum Line: Sendable {
        case item(VaultInterface.Item, secret: SecureBytes)
        case login(SessionInterface.BackupLogin)
    }

    public let header: VaultInterface.BackupHeader
    public let lines: [Line]

    /// Writes the lines into memory that is wiped when released.
    public struct Writer: ~Copyable {
        private var writer = WireWriter(capacity: 4096)

        public init(header: VaultInterface.BackupHeader) {
            writer.beginObject()
            header.encodeMembers(to: &writer)
            writer.endObject()
            writer.newline()
        }

        public mutating func item(_ item: VaultInterface.Item, secret: SecureBytes) {
            writer.beginObject()
            writer.field("item", item)
            writer.secretField("secret", secret)
            writer.endObject()
            writer.newline()
        }

        public mutating func login(_ login: SessionInterface.BackupLogin) {
            writer.beginObject()
            writer.field("login", login)
            writer.endObject()
            writer.newline()
        }

        public consuming func finish() -> WireBytes { writer.finish() }
    }

    /// The secret members of a line, diverted into secure memory as they are parsed.
    private static let secrets = SecretLimits(["secret": WireLimits.secretBytes])
        .merging(SessionInterface.Restore.requestSecrets)

    /// Reads a backup's plaintext; throws ``BackupFormatError`` (with the line number, never its
    /// contents) for anything that is not this format.
    public init(plaintext: SecureBytes) throws(BackupFormatError) {
        let paths = Set(Self.secrets.limits.keys)
        var header: VaultInterface.BackupHeader?
        var lines: [Line] = []
        try plaintext.forEachLine { (number: Int, line: UnsafeRawBufferPointer) throws(BackupFormatError) in
            var diverted: [String: SecretField] = [:]
            let value: JSONValue
            do throws(JSONParseError) {
                value = try JSONValue.parse(line, maxDepth: Self.maximumDepth, divertingStringsAt: paths) { path, raw in
                    diverted[path] = Self.secrets.decode(path, raw)
                }
            } catch {
                throw BackupFormatError(line: number, "is not JSON (\(error.reason.rawValue) at byte \(error.offset))")
            }
            guard let object = value.objectValue else { throw BackupFormatError(line: number, "is not a JSON object") }
            let parameters = WireParameters(object, secrets: diverted)
            if header == nil {
                header = try Self.header(parameters, line: number)
                return
            }
            guard parameters.has("item") || parameters.has("login") else {
                throw BackupFormatError(line: number, "is neither an item nor a login")
            }
            do throws(WireParameterError) {
                if parameters.has("item") {
                    lines.append(.item(try parameters.decode("item"), secret: try parameters.secret("secret")))
                } else {
                    lines.append(.login(try parameters.decode("login")))
                }
            } catch {
                throw BackupFormatError(line: number, "is not valid: \(error)")
            }
        }
        guard let header else { throw BackupFormatError(line: 1, "is missing: the backup is empty") }
        let items = lines.count { if case .item = $0 { true } else { false } }
        guard header.items == items, header.logins == lines.count - items else {
            throw BackupFormatError(line: 1, "promises \(header.items) items and \(header.logins) logins, but the backup holds \(items) and \(lines.count - items)")
        }
        self.header = header
        self.lines = lines
    }
}

extension BackupDocument {
    /// The first line: a header of this format and version.
    static func header(_ parameters: WireParameters, line number: Int) throws(BackupFormatError) -> VaultInterface.BackupHeader {
        let read: VaultInterface.BackupHeader
        do throws(WireParameterError) { read = try VaultInterface.BackupHeader(from: parameters) } catch {
            throw BackupFormatError(line: number, "is not a backup's header: \(error)")
        }
        guard read.format == Self.format else {
            throw BackupFormatError(line: number, "does not start a sortedvault backup (format \(read.format.debugDescription))")
        }
        guard read.version == Self.version else {
            throw BackupFormatError(line: number, "is a backup of format version \(read.version); this sortedvault reads version \(Self.version): update it")
        }
        return read
    }
}

/// A backup's plaintext that is not the format: the line and what is wrong, never its contents.
public struct BackupFormatError: Error, Sendable, CustomStringConvertible {
    public let line: Int
    public let reason: String

    init(line: Int, _ reason: String) {
        self.line = line
        self.reason = reason
    }

    public var description: String { "line \(line) of the backup \(reason)" }
}

extension WireBytes: ReadableBytes {}
