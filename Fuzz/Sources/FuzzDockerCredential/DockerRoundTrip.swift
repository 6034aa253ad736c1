import BoundedJSON
@_spi(Fuzzing) import CredentialHelpers
import Dispatch
import Foundation
import FuzzSupport
import VaultCrypto
import VaultTesting

/// One login `store` was given, taken through docker's protocol against a fresh in-memory store:
///
/// - `store` accepts it (or refuses it with a ``DockerCredentialError``, for a name no item may have);
/// - `list` is exactly `{URL: user}`;
/// - `get` with the URL as docker sends it answers one line, Go's JSON (no raw `<`, `>`, `&` or
///   control byte), whose ServerURL, Username and Secret are the ones stored, byte for byte;
/// - storing another user for the same URL replaces the first (docker keeps one login per server);
/// - `erase` removes it: `get` then says docker's not-found message and `list` is empty.
struct DockerRoundTrip {
    let input: SecureBytes
    let serverURL: String
    let username: String
    let secret: [UInt8]

    func check() {
        let helper = DockerCredentialStore(store: InMemoryTokenStore())
        switch blocking({ try await helper.store(input) }) {
        case .success: break
        case .failure(let error):
            require(error is DockerCredentialError, "store failed with \(type(of: error)), not a DockerCredentialError")
            return
        }
        require(!serverURL.isEmpty && !username.isEmpty, "store accepted an empty server URL or user name")
        expectList(helper, [serverURL: username])
        // docker sends `get` the URL it stored, as one line; the helper reads it trimmed.
        let sent = SecureBytes(copying: Array((serverURL + "\n").utf8))
        let asSent = try? DockerCredentialStore.serverURL(sent)
        guard asSent == serverURL else { return }
        expectGet(helper, sent, username: username, secret: secret)

        let other = username + "-2"
        let replacement = try! JSONSerialization.data(withJSONObject: ["ServerURL": serverURL, "Username": other, "Secret": "s"])
        if case .success = blocking({ try await helper.store(SecureBytes(copying: Array(replacement))) }) {
            expectList(helper, [serverURL: other])
            expectGet(helper, sent, username: other, secret: Array("s".utf8))
        }

        let erased = blocking { try await helper.erase(sent) }
        require((try? erased.get()) != nil, "erase of a stored login failed: \(erased)")
        let gone = blocking { try await helper.get(sent) }
        require((try? gone.get()) == nil, "get found a login after erase")
        if case .failure(let error) = gone {
            require("\(error)" == DockerCredentialStore.notFoundMessage, "get after erase said \(error), not docker's not-found message")
        }
        expectList(helper, [:])
    }

    private func expectList(_ helper: DockerCredentialStore, _ logins: [String: String]) {
        let listed = blocking { try await helper.list() }
        guard case .success(let output) = listed else { require(false, "list failed: \(listed)"); return }
        expectGoJSONLine(output, "list")
        let object = (try? JSONValue.parse(output.dropLast()))?.objectValue
        require(object?.mapValues(\.stringValue) == logins.mapValues { $0 as String? },
                "list answered \(String(decoding: output, as: UTF8.self).debugDescription), not \(logins)")
    }

    private func expectGet(_ helper: DockerCredentialStore, _ sent: SecureBytes, username: String, secret: [UInt8]) {
        let answer = blocking { try await helper.get(sent) }
        guard case .success(let answered) = answer else { require(false, "get of a stored login failed: \(answer)"); return }
        let output = answered.withUnsafeBytes { Array($0) }
        expectGoJSONLine(output, "get")
        let object = (try? JSONValue.parse(output.dropLast()))?.objectValue
        require(object?.keys.sorted() == ["Secret", "ServerURL", "Username"], "get answered other fields: \(object?.keys.sorted() ?? [])")
        require(object?["ServerURL"]?.stringValue == serverURL, "get answered another server URL")
        require(object?["Username"]?.stringValue == username, "get answered another user name")
        require(object?["Secret"]?.stringValue.map { Array($0.utf8) } == secret, "get answered another secret")
    }

    /// One line of JSON as Go's encoder writes it: a newline only at the end, and none of the bytes
    /// Go always escapes.
    private func expectGoJSONLine(_ output: [UInt8], _ command: String) {
        require(output.last == UInt8(ascii: "\n"), "\(command)'s answer does not end with a newline")
        let body = output.dropLast()
        require(!body.contains { $0 < 0x20 || $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: ">") || $0 == UInt8(ascii: "&") },
                "\(command)'s answer holds a byte Go escapes: \(String(decoding: output, as: UTF8.self).debugDescription)")
    }
}

/// Where a task leaves its result for the thread that waits for it (the semaphore orders the two).
private final class ResultBox<T: Sendable>: @unchecked Sendable {
    var result: Result<T, any Error>?
}

/// The result of `body`, run on Swift's concurrency pool while this (libFuzzer's) thread waits.
func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
        done.signal()
    }
    done.wait()
    return box.result!
}
