import BoundedJSON
import Foundation

/// The one style of every `--json` output: pretty-printed, keys sorted, times as ISO 8601 text in
/// UTC (`2026-11-24T05:02:11Z`), never as seconds since 1970.
///
/// ```swift
/// print(CLIJSON.text(.object(reply)))   // keys ending in "At" are times
/// ```
enum CLIJSON {
    static func text(_ value: JSONValue, isTime: (String) -> Bool = { $0.hasSuffix("At") }) -> String {
        let object = foundation(value, key: nil, isTime: isTime)
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes, .fragmentsAllowed])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// Encodable values (`VaultStatus`, rows) in the same style.
    static func text<Value: Encodable>(_ value: Value) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func time(_ date: Date) -> String { date.formatted(.iso8601) }

    private static func foundation(_ value: JSONValue, key: String?, isTime: (String) -> Bool) -> Any {
        switch value {
        case .null: return NSNull()
        case .bool(let flag): return flag
        case .int(let number):
            if let key, isTime(key) { return time(Date(timeIntervalSince1970: Double(number))) }
            return number
        case .double(let number):
            if let key, isTime(key) { return time(Date(timeIntervalSince1970: number)) }
            return number
        case .string(let text): return text
        case .array(let values): return values.map { foundation($0, key: key, isTime: isTime) }
        case .object(let members):
            return Dictionary(uniqueKeysWithValues: members.map { ($0.key, foundation($0.value, key: $0.key, isTime: isTime)) })
        }
    }
}
