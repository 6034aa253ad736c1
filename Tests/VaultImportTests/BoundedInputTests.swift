import Foundation
import Testing
import VaultCrypto
@testable import VaultImport

/// Outside input stays bounded: oversized files, garbage and too many entries give clear errors.
@Suite(.timeLimit(.minutes(20))) struct BoundedInputTests {
    let fixture: ImportFixture
    init() throws { fixture = try ImportFixture() }

    @Test func aFileOverTheLimitIsRefusedBeforeParsing() throws {
        let path = try fixture.write("big", String(repeating: "x", count: ImportLimits.maximumFileBytes + 1))
        let error = #expect(throws: ImportError.self) { try ImportFile.read(path: path) }
        #expect(error?.code == .tooLarge)
        #expect(error?.reason.contains(path) == true)
    }

    @Test func aMissingFileIsNoneAndADirectoryIsRefused() throws {
        #expect(try ImportFile.read(path: fixture.directory + "/absent") == nil)
        #expect(try ImportFile.read(path: fixture.directory + "/absent/deeper") == nil)
        let error = #expect(throws: ImportError.self) { try ImportFile.read(path: fixture.directory) }
        #expect(error?.code == .notRegularFile)
    }

    @Test(arguments: ImportSource.allCases)
    func garbageIsRefusedOrYieldsNothingAndNeverEchoesTheInput(source: ImportSource) throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            let garbage = (0..<Int.random(in: 1...2000, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            do {
                let found = try garbage.withUnsafeBytes { try ImportScan.parse($0, source: source, path: "garbage") }
                for credential in found {
                    for range in credential.removal { #expect(range.lowerBound >= 0 && range.upperBound <= garbage.count) }
                }
            } catch let error as ImportError {
                #expect(error.reason.hasPrefix("garbage"))
            }
        }
    }

    @Test func tooManyEntriesIsAnError() throws {
        let lines = (0...ImportLimits.maximumEntries).map { "https://u:p@host\($0).example\n" }.joined()
        let path = try fixture.write("git-credentials", lines)
        let error = #expect(throws: ImportError.self) { try fixture.scan(path, as: .gitCredentials) }
        #expect(error?.code == .tooManyEntries)
    }
}
