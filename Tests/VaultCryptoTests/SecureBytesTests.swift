import Foundation
import Testing
import VaultCrypto

@Suite(.timeLimit(.minutes(20))) struct SecureBytesTests {
    @Test func copiesAndExposesBytesOnlyInsideTheClosure() {
        let bytes = SecureBytes(copying: [1, 2, 3])
        #expect(bytes.count == 3)
        #expect(bytes.withUnsafeBytes { Array($0) } == [1, 2, 3])
    }

    @Test func equalityComparesContentsAndLength() {
        #expect(SecureBytes(copying: [1, 2, 3]) == SecureBytes(copying: [1, 2, 3]))
        #expect(SecureBytes(copying: [1, 2, 3]) != SecureBytes(copying: [1, 2, 4]))
        #expect(SecureBytes(copying: [1, 2]) != SecureBytes(copying: [1, 2, 3]))
        #expect(SecureBytes(copying: []) == SecureBytes(copying: []))
    }

    @Test func descriptionNeverShowsTheSecret() {
        let secret = SecureBytes(copying: Array("hunter2-secret".utf8))
        for text in [secret.description, secret.debugDescription, "\(secret)", String(reflecting: secret)] {
            #expect(!text.contains("hunter2"))
            #expect(text.contains("redacted"))
        }
    }

    @Test func randomBytesDiffer() {
        #expect(SecureBytes(randomCount: 32) != SecureBytes(randomCount: 32))
    }

    @Test func releasedMemoryIsZeroedBeforeItIsReused() {
        for size in [1, 32, 100, 4096, 5000] {
            for _ in 0..<100 {
                _ = SecureBytes(count: size) { $0.initializeMemory(as: UInt8.self, repeating: 0xA5) }
            }
            for _ in 0..<100 {
                var sawOldBytes = false
                _ = SecureBytes(count: size) { buffer in
                    // Fresh libsodium blocks are filled with 0xdb on purpose; an old secret's bytes never come back.
                    sawOldBytes = buffer.contains(0xA5)
                    buffer.initializeMemory(as: UInt8.self, repeating: 0x5A)
                }
                #expect(!sawOldBytes, "a \(size)-byte block was handed out with old contents")
            }
        }
    }

    @Test func base64RoundTripsInSecureMemory() {
        for size in [0, 1, 2, 3, 31, 1024] {
            let bytes = SecureRandom.bytes(count: size)
            let secret = SecureBytes(copying: bytes)
            let encoded = secret.base64EncodedString()
            #expect(encoded == Data(bytes).base64EncodedString())
            #expect(SecureBytes(base64Encoded: encoded)?.constantTimeEquals(bytes) == true)
        }
        for bad in ["*", "abc", "ab=c", "YQ== ", " YQ==", "YQ==YQ=="] {
            #expect(SecureBytes(base64Encoded: bad) == nil, "\(bad) decoded")
        }
    }

    @Test func emptySecretIsUsable() {
        let empty = SecureBytes(copying: [UInt8]())
        #expect(empty.count == 0)
        #expect(empty.withUnsafeBytes { $0.count } == 0)
    }

    @Test func linesEndAtLineFeedsAndKeepTheirCarriageReturnsUnlessAskedNotTo() {
        #expect(lines(of: "one\r\n\ntwo\nlast") == ["1:one\r", "2:", "3:two", "4:last"])
        #expect(lines(of: "one\r\n\ntwo\nlast", droppingCarriageReturns: true) == ["1:one", "2:", "3:two", "4:last"])
        #expect(lines(of: "one\n") == ["1:one"])
        #expect(lines(of: "\n\n") == ["1:", "2:"])
        #expect(lines(of: "").isEmpty)
    }

    @Test func theFirstErrorEndsTheWalkOfLines() {
        var seen: [Int] = []
        var caught: StopAt?
        do throws(StopAt) {
            try SecureBytes(copying: Array("a\nb\nc\n".utf8)).forEachLine { (number: Int, _: UnsafeRawBufferPointer) throws(StopAt) in
                seen.append(number)
                if number == 2 { throw StopAt(line: number) }
            }
        } catch {
            caught = error
        }
        #expect(caught == StopAt(line: 2) && seen == [1, 2])
    }

    private struct StopAt: Error, Equatable {
        let line: Int
    }

    /// The lines `forEachLine` gives, each as "number:text".
    private func lines(of text: String, droppingCarriageReturns: Bool = false) -> [String] {
        var lines: [String] = []
        SecureBytes(copying: Array(text.utf8)).forEachLine(droppingCarriageReturns: droppingCarriageReturns) { number, line in
            lines.append("\(number):" + String(decoding: line, as: UTF8.self))
        }
        return lines
    }
}
