import Foundation
// Imports Foundation but uses only what FoundationEssentials provides (ProcessInfo, URL): the static
// linker then keeps FoundationEssentials only, without CoreFoundation or ICU.
let env = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"] ?? "/run"
print("hello \(URL(fileURLWithPath: env).appendingPathComponent("sortedvault/socket").path)")
