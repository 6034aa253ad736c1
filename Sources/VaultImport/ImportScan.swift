/// One entry point over the parsers: the right one for a source.
///
/// ```swift
/// for location in ScanLocations(home: "/home/ada", environment: env).all() {
///     guard let bytes = try ImportFile.read(path: location.path) else { continue }
///     let found = try bytes.withUnsafeBytes { try ImportScan.parse($0, source: location.source, path: location.path) }
/// }
/// ```
public enum ImportScan {
    public static func parse(_ bytes: UnsafeRawBufferPointer, source: ImportSource, path: String) throws -> [FoundCredential] {
        switch source {
        case .gitCredentials: try GitCredentialsFile.parse(bytes, path: path)
        case .dockerConfig: try DockerConfigFile.parse(bytes, path: path).credentials
        case .netrc: try NetrcFile.parse(bytes, path: path)
        case .gh: try GHHostsFile.parse(bytes, path: path)
        case .pypirc: try PypircFile.parse(bytes, path: path)
        case .npmrc: try NpmrcFile.parse(bytes, path: path)
        }
    }
}
