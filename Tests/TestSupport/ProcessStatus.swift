import Foundation

/// Fields of `/proc/PID/status` that tests check on a live daemon or client: its memory
/// (`VmRSS`, `VmHWM`, in KiB) and its supplementary groups.
public struct ProcessStatus: Sendable {
    public let fields: [String: String]

    /// Reads `/proc/PID/status`; nil when the process is gone.
    public init?(pid: Int32) {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        var fields: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        self.fields = fields
    }

    /// Resident memory now, in KiB.
    public var residentKiB: Int { kibibytes("VmRSS") }
    /// The most resident memory ever, in KiB.
    public var peakResidentKiB: Int { kibibytes("VmHWM") }

    private func kibibytes(_ name: String) -> Int {
        Int(fields[name]?.split(separator: " ").first ?? "") ?? 0
    }
}

/// The descriptors a process holds, as `/proc/PID/fd` shows them: number and target.
public func openDescriptors(of pid: Int32) -> [Int32: String] {
    let directory = "/proc/\(pid)/fd"
    var result: [Int32: String] = [:]
    for entry in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
        guard let number = Int32(entry) else { continue }
        result[number] = (try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/" + entry)) ?? "?"
    }
    return result
}
