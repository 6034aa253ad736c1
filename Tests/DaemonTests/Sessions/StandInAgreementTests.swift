import Foundation
import TestSupport
import Testing
import Varlink

extension DaemonSuite {
    /// The GoTrue and Firebase stand-ins must speak their upstream protocols: the official Supabase
    /// client runs against the GoTrue stand-in, and the Firebase stand-in's answers are checked
    /// against the REST reference's shapes. (docs/stand-ins.md says where each behaviour comes from.)
    @Suite struct StandInAgreementTests {
        @Test func theOfficialSupabaseClientAgreesWithTheGoTrueStandIn() throws {
            let gotrue = try ProviderServer(.supabase)
            let script = ProviderServer.supportDirectory + "/gotrue-standin/official_client_check.py"
            let (status, stdout, stderr) = try Subprocess.run(
                [ProviderServer.python, script, "--url", gotrue.base, "--anon-key-file", gotrue.stateDirectory + "/anon-key"],
                environment: ProcessInfo.processInfo.environment, input: Data())
            let output = String(decoding: stdout, as: UTF8.self)
            #expect(status == 0, "supabase-auth disagrees with the stand-in:\n\(output)\n\(String(decoding: stderr, as: UTF8.self))")
            #expect(output.contains("official client agrees"))
        }

        @Test func theGoTrueStandInRefusesAFormBodyAndARequestWithoutTheAPIKey() async throws {
            let gotrue = try ProviderServer(.supabase)
            let refresh = try #require(try await gotrue.signIn().jsonField("refresh_token"))
            let (formStatus, formBody) = try await gotrue.post("/auth/v1/token?grant_type=refresh_token",
                                                               form: ["refresh_token": refresh], headers: ["apikey": gotrue.apiKey!])
            #expect(formStatus == 400)
            #expect(formBody.jsonField("error_code") == "bad_json")
            let (keyless, _) = try await gotrue.post("/auth/v1/token?grant_type=refresh_token", json: ["refresh_token": .string(refresh)])
            #expect(keyless == 401)
            let (status, body) = try await gotrue.refreshDirectly(refresh)
            #expect(status == 200)
            #expect(body.jsonField("refresh_token") != refresh, "GoTrue rotates refresh tokens")
            #expect(try await gotrue.refreshRequests() == 2, "the gateway refused the keyless request before GoTrue saw it")
        }

        @Test func theFirebaseStandInAnswersTheReferenceShapesForFormAndJSONRefreshes() async throws {
            let firebase = try ProviderServer(.firebase)
            let signIn = try await firebase.signIn()
            let refresh = try #require(signIn.jsonField("refreshToken"))
            #expect(signIn.jsonField("expiresIn") == "3600", "expiresIn is a string")
            let idToken = try #require(signIn.jsonField("idToken"))
            let claims = try #require(Self.claims(of: idToken))
            let project = try #require(firebase.firebaseProjectID)
            #expect(claims["iss"]?.stringValue == "https://securetoken.google.com/\(project)")
            #expect(claims["aud"]?.stringValue == project)
            #expect(claims["sub"]?.stringValue == signIn.jsonField("localId"))
            #expect(claims["user_id"]?.stringValue == signIn.jsonField("localId"))

            let (formStatus, formBody) = try await firebase.refreshDirectly(refresh)
            #expect(formStatus == 200)
            #expect(formBody.jsonField("expires_in") == "3600")
            #expect(formBody.jsonField("user_id") == signIn.jsonField("localId"))
            #expect(formBody.jsonField("refresh_token") == refresh, "securetoken does not rotate by default")
            let (jsonStatus, jsonBody) = try await firebase.post("/securetoken.googleapis.com/v1/token?key=\(firebase.apiKey!)",
                                                                 json: ["grant_type": .string("refresh_token"), "refresh_token": .string(refresh)])
            #expect(jsonStatus == 200)
            #expect(jsonBody.jsonField("id_token") != nil)
        }

        @Test func theFirebaseStandInAnswersErrorObjectsForEveryRefusal() async throws {
            let firebase = try ProviderServer(.firebase)
            let refresh = try #require(try await firebase.signIn().jsonField("refreshToken"))
            let path = "/securetoken.googleapis.com/v1/token?key=\(firebase.apiKey!)"
            #expect(try await Self.errorMessage(firebase.post(path, form: ["refresh_token": refresh])) == "MISSING_GRANT_TYPE")
            #expect(try await Self.errorMessage(firebase.post(path, form: ["grant_type": "password"])) == "INVALID_GRANT_TYPE")
            #expect(try await Self.errorMessage(firebase.post(path, form: ["grant_type": "refresh_token"])) == "MISSING_REFRESH_TOKEN")
            #expect(try await Self.errorMessage(firebase.refreshDirectly("AMf-vBnotatoken")) == "INVALID_REFRESH_TOKEN")
            let (keyless, _) = try await firebase.post("/securetoken.googleapis.com/v1/token", form: ["grant_type": "refresh_token", "refresh_token": refresh])
            #expect(keyless == 403)
            try await firebase.disableUser()
            #expect(try await Self.errorMessage(firebase.refreshDirectly(refresh)) == "USER_DISABLED")
            try await firebase.enableUser()
            try await firebase.revokeAll()
            #expect(try await Self.errorMessage(firebase.refreshDirectly(refresh)) == "TOKEN_EXPIRED")
            let fresh = try #require(try await firebase.signIn().jsonField("refreshToken"))
            try await firebase.deleteUser()
            #expect(try await Self.errorMessage(firebase.refreshDirectly(fresh)) == "USER_NOT_FOUND")
        }

        @Test func theStandInsKeepTheirTokensAcrossARestart() async throws {
            for kind in [ProviderServer.Kind.supabase, .firebase] {
                let provider = try ProviderServer(kind)
                let answer = try await provider.signIn()
                let refresh = try #require(answer.jsonField("refresh_token") ?? answer.jsonField("refreshToken"))
                let port = provider.port
                provider.stop()
                try provider.start()
                #expect(provider.port == port)
                #expect(try await provider.refreshDirectly(refresh).0 == 200, "\(kind) lost its state")
            }
        }

        @Test func everyProviderKindAnswersTheSameTestControls() async throws {
            for kind in [ProviderServer.Kind.oauth2, .supabase, .firebase] {
                let provider = try ProviderServer(kind)
                let answer = try await provider.signIn()
                let refresh = try #require(answer.jsonField("refresh_token") ?? answer.jsonField("refreshToken"), "\(kind)")
                try await provider.fail(count: 1, status: 503)
                #expect(try await provider.refreshDirectly(refresh).0 == 503, "\(kind): /test/fail")
                let (status, body) = try await provider.refreshDirectly(refresh)
                #expect(status == 200, "\(kind): the failure is used up")
                #expect(try await provider.refreshRequests() == 2)
                #expect(try await provider.refreshResponses(503) == 1)
                #expect(try await provider.passwordRequests() == 1)
                let current = try #require(body.jsonField("refresh_token"))
                try await provider.revokeAll()
                #expect(try await provider.refreshDirectly(current).0 == 400, "\(kind): /test/revoke-all")
            }
        }

        /// The `error.message` of a Google error object, after checking its shape (code = HTTP status).
        static func errorMessage(_ answer: (Int, [UInt8])) -> String? {
            guard let error = (try? JSONValue.parse(answer.1))?.objectValue?["error"]?.objectValue,
                  error["code"]?.intValue == Int64(answer.0), error["status"]?.stringValue == "INVALID_ARGUMENT" else { return nil }
            return error["message"]?.stringValue
        }

        static func claims(of jwt: String) -> [String: JSONValue]? {
            let parts = jwt.split(separator: ".")
            guard parts.count == 3 else { return nil }
            var payload = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            payload += String(repeating: "=", count: (4 - payload.count % 4) % 4)
            guard let data = Data(base64Encoded: payload) else { return nil }
            return (try? JSONValue.parse(Array(data)))?.objectValue
        }
    }
}
