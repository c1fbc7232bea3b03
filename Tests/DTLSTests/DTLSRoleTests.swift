import DTLS
import Testing

@Suite("DTLS role from a=setup")
struct DTLSRoleTests {
    @Test(
        "RFC 5763 §5: the active side is the client",
        arguments: [
            ("active", true, DTLSRole.client),
            ("passive", true, .server),
            ("active", false, .server),
            ("passive", false, .client),
            ("ACTIVE", true, .client),
        ]
    )
    func roles(setup: String, weAnswered: Bool, role: DTLSRole) throws {
        #expect(try DTLSRole(answerSetup: setup, weAnswered: weAnswered) == role)
    }

    @Test("an answer may not say actpass or holdconn", arguments: ["actpass", "holdconn", "", "client"])
    func refused(setup: String) {
        let error = #expect(throws: DTLSError.self) { try DTLSRole(answerSetup: setup, weAnswered: false) }
        #expect(error?.code == .invalidConfiguration)
    }

    @Test("the answer we write for each role")
    func answerSetup() {
        #expect(DTLSRole.client.answerSetup == "active")
        #expect(DTLSRole.server.answerSetup == "passive")
    }
}
