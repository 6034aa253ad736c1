import BoundedJSON
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// The one style of every `--json` output: pretty-printed, keys sorted, times as ISO 8601 text in
/// UTC (`2026-11-24T05:02:11Z`), never as seconds since 1970.
///
/// ```swift
/// print(CLIJSON.text(.object(reply)))   // keys ending in "At" are times
/// ```
enum CLIJSON {
    static func text(_ value: JSONValue, isTime: @escaping (String) -> Bool = { $0.hasSuffix("At") }) -> String {
        (try? text(Timed(value: value, key: nil, isTime: isTime))) ?? "null"
    }

    /// Encodable values (`VaultStatus`, rows) in the same style.
    static func text<Value: Encodable>(_ value: Value) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func time(_ date: Date) -> String { date.formatted(.iso8601) }

    /// A JSON value to encode, with numbers under time keys written as ISO 8601 text.
    private struct Timed: Encodable {
        let value: JSONValue
        let key: String?
        let isTime: (String) -> Bool

        func encode(to encoder: any Encoder) throws {
            switch value {
            case .null:
                var single = encoder.singleValueContainer()
                try single.encodeNil()
            case .bool(let flag):
                var single = encoder.singleValueContainer()
                try single.encode(flag)
            case .int(let number):
                var single = encoder.singleValueContainer()
                if let key, isTime(key) { try single.encode(time(Date(timeIntervalSince1970: Double(number)))) } else { try single.encode(number) }
            case .double(let number):
                var single = encoder.singleValueContainer()
                if let key, isTime(key) { try single.encode(time(Date(timeIntervalSince1970: number))) } else { try single.encode(number) }
            case .string(let text):
                var single = encoder.singleValueContainer()
                try single.encode(text)
            case .array(let values):
                var list = encoder.unkeyedContainer()
                for element in values { try list.encode(Timed(value: element, key: key, isTime: isTime)) }
            case .object(let members):
                var object = encoder.container(keyedBy: Name.self)
                for (name, member) in members { try object.encode(Timed(value: member, key: name, isTime: isTime), forKey: Name(name)) }
            }
        }
    }

    private struct Name: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
