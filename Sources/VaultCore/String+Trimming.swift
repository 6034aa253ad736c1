extension StringProtocol {
    /// The text without leading and trailing white space (spaces, tabs, line breaks): what
    /// `trimmingCharacters(in: .whitespacesAndNewlines)` gave, without full Foundation in the program.
    public var trimmedWhitespace: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })!
        var text = ""
        text.unicodeScalars.append(contentsOf: scalars[first...last])
        return text
    }
}

/// The directory part of a path, as `NSString.deletingLastPathComponent` gave it: "/a/b" for
/// "/a/b/c", "/" for "/c", "" for "c".
public func directoryOfPath(_ path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "" }
    return slash == path.startIndex ? "/" : String(path[..<slash])
}
