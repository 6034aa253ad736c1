import Testing
import Varlink

@Suite(.timeLimit(.minutes(20))) struct VarlinkCallTests {
    let call = VarlinkCall(
        method: "org.sortedvault.vault.Store",
        parameters: ["s": "x", "i": 7, "d": 7.0, "b": true, "n": nil, "o": ["k": 1], "wrong": [1]])

    @Test func splitsTheMethodName() {
        #expect(call.interface == "org.sortedvault.vault")
        #expect(call.member == "Store")
    }

    @Test func typedAccessors() throws {
        #expect(try call.string("s") == "x")
        #expect(try call.int("i") == 7)
        #expect(try call.int("d") == 7)
        #expect(try call.bool("b"))
        #expect(try call.optionalString("n") == nil)
        #expect(try call.optionalString("absent") == nil)
        #expect(try call.optionalInt("n") == nil)
        #expect(try call.optionalBool("absent") == nil)
        #expect(try call.optionalObject("o") == ["k": 1])
        #expect(try call.optionalObject("n") == nil)
    }

    @Test func wrongTypesAndMissingFieldsAreInvalidParameters() {
        #expect(throws: VarlinkError.invalidParameter("absent")) { try call.string("absent") }
        #expect(throws: VarlinkError.invalidParameter("n")) { try call.string("n") }
        #expect(throws: VarlinkError.invalidParameter("wrong")) { try call.optionalString("wrong") }
        #expect(throws: VarlinkError.invalidParameter("s")) { try call.int("s") }
        #expect(throws: VarlinkError.invalidParameter("s")) { try call.optionalInt("s") }
        #expect(throws: VarlinkError.invalidParameter("i")) { try call.bool("i") }
        #expect(throws: VarlinkError.invalidParameter("i")) { try call.optionalBool("i") }
        #expect(throws: VarlinkError.invalidParameter("wrong")) { try call.optionalObject("wrong") }
    }

    @Test func errorDescriptionsNameParametersButNotValues() {
        let error = VarlinkError(name: "org.sortedvault.vault.Rejected", parameters: ["token": "hunter2"])
        #expect(error.description == "varlink error org.sortedvault.vault.Rejected (parameters: token)")
        #expect(!VarlinkClientError.protocolViolation("x").description.isEmpty)
    }
}
