import Foundation
import Testing
import VaultCrypto
@testable import VaultImport

/// The replacement keeps the file's mode, and leaves the original whole when it fails part way.
@Suite(.timeLimit(.minutes(20))) struct AtomicFileReplacerTests {
    let fixture: ImportFixture
    init() throws { fixture = try ImportFixture() }

    func mode(_ path: String) -> mode_t {
        var info = stat()
        stat(path, &info)
        return info.st_mode & 0o7777
    }

    func entries() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: fixture.directory).sorted() }

    @Test func theNewBytesTakeTheOriginalsPlaceWithItsModeAndABackup() throws {
        let path = try fixture.write(".netrc", "machine a login b password c\n", mode: 0o640)
        let (original, found) = try fixture.scan(path, as: .netrc)
        let cleaned = try SourceRewriter.removing(found, from: original)
        try AtomicFileReplacer.replace(path: path, expecting: original, with: cleaned, keepBackup: true)
        #expect(try fixture.contents(path) == "machine a login b\n")
        #expect(mode(path) == 0o640)
        let backup = path + AtomicFileReplacer.backupSuffix
        #expect(try fixture.contents(backup) == "machine a login b password c\n")
        #expect(mode(backup) == 0o640)
        #expect(try entries() == [".netrc", ".netrc.sortedvault-backup"])

        // A second run never overwrites the first backup.
        let (again, _) = try fixture.scan(path, as: .netrc)
        let error = #expect(throws: ImportError.self) { try AtomicFileReplacer.replace(path: path, expecting: again, with: [], keepBackup: true) }
        #expect(error?.code == .system)
        #expect(try fixture.contents(path) == "machine a login b\n")
    }

    @Test func aLinkIsFollowedAndStaysALink() throws {
        let target = try fixture.write("dotfiles/netrc", "machine a login b password c\n")
        let link = fixture.directory + "/.netrc"
        symlink(target, link)
        let (original, found) = try fixture.scan(link, as: .netrc)
        try AtomicFileReplacer.replace(path: link, expecting: original, with: try SourceRewriter.removing(found, from: original), keepBackup: false)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
        #expect(try fixture.contents(target) == "machine a login b\n")
    }

    @Test(arguments: [AtomicFileReplacer.Step.backupWritten, .temporaryWritten])
    func aFailurePartWayLeavesTheOriginalWholeAndNoOtherFile(step: AtomicFileReplacer.Step) throws {
        let path = try fixture.write(".netrc", "machine a login b password c\n", mode: 0o600)
        let (original, found) = try fixture.scan(path, as: .netrc)
        let cleaned = try SourceRewriter.removing(found, from: original)
        #expect(throws: ImportError.self) {
            try AtomicFileReplacer.replace(path: path, expecting: original, with: cleaned, keepBackup: true, failingAfter: step)
        }
        #expect(try fixture.contents(path) == "machine a login b password c\n")
        #expect(try entries() == [".netrc"])
    }

    @Test func aFileChangedSinceTheScanIsLeftAlone() throws {
        let path = try fixture.write(".npmrc", "//r/:_authToken=one\n")
        let (original, found) = try fixture.scan(path, as: .npmrc)
        try fixture.write(".npmrc", "//r/:_authToken=two\n")
        let error = #expect(throws: ImportError.self) {
            try AtomicFileReplacer.replace(path: path, expecting: original, with: try SourceRewriter.removing(found, from: original), keepBackup: false)
        }
        #expect(error?.code == .changedSinceScan)
        #expect(try fixture.contents(path) == "//r/:_authToken=two\n")
    }
}
