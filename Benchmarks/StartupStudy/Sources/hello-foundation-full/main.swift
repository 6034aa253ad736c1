import Foundation

// Uses what the sortedvault CLI uses from Foundation beyond FoundationEssentials (String(format:),
// DateFormatter, FileHandle), so the static linker keeps all of Foundation, CoreFoundation and ICU's data.
let formatter = DateFormatter()
formatter.dateFormat = "yyyy-MM-dd HH:mm"
let line = String(format: "hello %@ %d\n", formatter.string(from: Date(timeIntervalSince1970: 0)), 42)
FileHandle.standardOutput.write(line.data(using: .utf8)!)
