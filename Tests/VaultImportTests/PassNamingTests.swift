import Testing
import VaultCore
import VaultImport

/// Where a `pass` entry lands: docker-credential-pass's logins where docker's helper asks, every
/// other entry by its folder and leaf.
@Suite(.timeLimit(.minutes(5))) struct PassNamingTests {
    @Test func aDockerCredentialPassLoginLandsWhereDockersHelperAsks() throws {
        // docker-credential-pass names the folder with Go's padded URL-safe base64 of the server URL.
        let folder = "aHR0cHM6Ly9yZWdpc3RyeS5leGFtcGxlLmNvbQ=="   // https://registry.example.com
        let destination = try ImportNaming.destination(forPassEntry: "docker-credential-helpers/\(folder)/bob")
        #expect(destination.key == (try ItemKey(service: "docker:https://registry.example.com", account: "bob")))
        #expect(destination.label == "Docker Credentials")
        let urlSafe = try ImportNaming.destination(forPassEntry: "docker-credential-helpers/aHR0cHM6Ly9leGFtcGxlLmNvbS8_YT0-/ada")
        #expect(urlSafe.key.service == "docker:https://example.com/?a=>")
    }

    @Test func anyOtherEntryIsNamedByItsFolderAndLeaf() throws {
        #expect(try ImportNaming.destination(forPassEntry: "email/work/ada").key == (try ItemKey(service: "pass:email/work", account: "ada")))
        #expect(try ImportNaming.destination(forPassEntry: "bank").key == (try ItemKey(service: "pass:", account: "bank")))
        // A docker folder that is not base64 is an ordinary entry.
        #expect(try ImportNaming.destination(forPassEntry: "docker-credential-helpers/not*base64/x").key.service
                == "pass:docker-credential-helpers/not*base64")
    }

    /// A desktop keyring item lands by the attributes the tool that stored it set.
    @Test func aKeyringItemLandsWhereTheToolThatStoredItsKindAsks() throws {
        let git = try ImportNaming.destination(forKeyringItem: "Git: https://git.example.com/", attributes: [
            "xdg:schema": "org.git.Password", "protocol": "https", "server": "git.example.com", "port": "8443", "user": "ada"])
        #expect(git.key == (try ItemKey(service: "git:https://git.example.com:8443", account: "ada")))
        let python = try ImportNaming.destination(forKeyringItem: "Password for 'ada'", attributes: [
            "application": "Python keyring library", "service": "https://upload.pypi.org/legacy/", "username": "ada"])
        #expect(python.key == (try ItemKey(service: "https://upload.pypi.org/legacy/", account: "ada")))
        let tool = try ImportNaming.destination(forKeyringItem: "IMAP", attributes: ["service": "org.example.mail", "user": "bob"])
        #expect(tool.key == (try ItemKey(service: "org.example.mail", account: "bob")) && tool.label == "IMAP")
        let other = try ImportNaming.destination(forKeyringItem: "Chrome Safe Storage", attributes: ["xdg:schema": "chrome_libsecret_os_crypt_password_v2"])
        #expect(other.key == (try ItemKey(service: "keyring:chrome_libsecret_os_crypt_password_v2", account: "Chrome Safe Storage")))
    }

    /// An item stored under no schema is named the same whether the keyring reports none or the
    /// generic one: `secret-tool search` shows `org.freedesktop.Secret.Generic` for an item
    /// `secret-tool store` just stored under none, and the import test saw it in one fresh-clone run
    /// and not in others.
    @Test func theGenericSchemaNamesAnItemAsNoSchemaDoes() throws {
        let none = try ImportNaming.destination(forKeyringItem: "Chrome Safe Storage", attributes: ["application": "chrome"])
        let generic = try ImportNaming.destination(forKeyringItem: "Chrome Safe Storage", attributes: [
            "application": "chrome", "xdg:schema": "org.freedesktop.Secret.Generic"])
        #expect(none.key == (try ItemKey(service: "keyring:item", account: "Chrome Safe Storage")))
        #expect(generic.key == none.key)
    }
}
