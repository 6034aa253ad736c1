import Foundation

/// Fields of `/proc/PID/status` that tests check on a live daemon or client: its memory
/// (`VmRSS`, `RssAnon`, `VmHWM`, in KiB) and its supplementary groups.
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
    /// Resident anonymous memory now (heap, stacks, buffers; not the mapped code), in KiB: what a
    /// client's data can make grow, and what unmapping code pages after start-up does not hide.
    public var anonymousResidentKiB: Int { kibibytes("RssAnon") }
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

/// The paths of the files `pid` has mapped (`/proc/PID/maps`), read to its end with `read(2)`: the
/// file reports a size of 0, so a reader that trusts the size gets only a part of it.
public func mappedFiles(of pid: Int32) -> Set<String> {
    let descriptor = open("/proc/\(pid)/maps", O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return [] }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { break }
        bytes += chunk[0..<count]
    }
    return Set(String(decoding: bytes, as: UTF8.self).split(separator: "\n").compactMap { line in
        line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true).dropFirst(5).first
            .map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.hasPrefix("/") ? $0 : nil }
    })
}
