import DTLS
import Foundation
import Testing

@Suite("DTLS certificate")
struct DTLSCertificateTests {
    @Test("two fresh certificates differ in key, serial and fingerprint")
    func freshDiffer() throws {
        let first = try DTLSCertificate.generate()
        let second = try DTLSCertificate.generate()
        #expect(first.fingerprint != second.fingerprint)
        #expect(first.certificatePEM != second.certificatePEM)
        let directory = try ScratchDirectory()
        let serials = try [first, second].enumerated().map { index, certificate in
            let file = try directory.write(certificate.certificatePEM, to: "fresh-\(index).pem")
            return try OpenSSLTool.run(["x509", "-in", file, "-noout", "-serial"], in: directory.path)
        }
        #expect(serials[0] != serials[1])
    }

    /// The openssl CLI reads what we generate: the same fingerprint, P-256, ECDSA with SHA-256,
    /// CN=rtc-publish, valid from a day ago for 30 days.
    @Test("the openssl CLI agrees on what a generated certificate is")
    func generatedAsOpenSSLSeesIt() throws {
        let certificate = try DTLSCertificate.generate()
        let directory = try ScratchDirectory()
        let file = try directory.write(certificate.certificatePEM, to: "generated.pem")
        let cli = try OpenSSLTool.fingerprint(ofCertificate: file, in: directory.path)
        #expect("sha-256 " + cli == certificate.fingerprint.sdpValue)

        let text = try OpenSSLTool.run(["x509", "-in", file, "-noout", "-text"], in: directory.path)
        #expect(text.contains("Subject: CN = rtc-publish"), "\(text)")
        #expect(text.contains("Issuer: CN = rtc-publish"), "\(text)")
        #expect(text.contains("ASN1 OID: prime256v1"), "\(text)")
        #expect(text.contains("Signature Algorithm: ecdsa-with-SHA256"), "\(text)")
        #expect(text.contains("Version: 3"), "\(text)")
        // Valid now and for at least 29 more days, but not 31.
        #expect(try checkEnd(file, days: 29, in: directory) == 0)
        #expect(try checkEnd(file, days: 31, in: directory) == 1)
    }

    /// `openssl x509 -checkend`: 0 if the certificate is still valid `days` from now, 1 if not.
    private func checkEnd(_ file: String, days: Int, in directory: ScratchDirectory) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: OpenSSLTool.path)
        process.arguments = ["x509", "-in", file, "-noout", "-checkend", "\(days * 86_400)"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test("a certificate and key made by the openssl CLI load, with the CLI's fingerprint")
    func loadPEM() throws {
        let directory = try ScratchDirectory()
        let files = try OpenSSLTool.makeCertificate(in: directory.path, commonName: "loaded")
        let certificate = try DTLSCertificate(certificatePath: files.certificate, privateKeyPath: files.key)
        let cli = try OpenSSLTool.fingerprint(ofCertificate: files.certificate, in: directory.path)
        #expect(certificate.fingerprint == (try DTLSFingerprint(sdp: "sha-256 " + cli)))
    }

    @Test("PEM load errors name the file")
    func loadErrors() throws {
        let directory = try ScratchDirectory()
        let good = try OpenSSLTool.makeCertificate(in: directory.path, commonName: "good")
        let other = try OpenSSLTool.makeCertificate(in: directory.path, commonName: "other")
        let garbage = try directory.write("this is not PEM\n", to: "garbage.pem")
        let missing = directory.path + "/missing.pem"
        let encrypted = directory.path + "/encrypted-key.pem"
        try OpenSSLTool.run(
            [
                "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-aes256", "-pass", "pass:secret",
                "-out", encrypted,
            ],
            in: directory.path
        )

        let cases: [(String, String, [String])] = [
            (missing, good.key, ["cannot open the certificate file '\(missing)'"]),
            (garbage, good.key, ["'\(garbage)' holds no usable PEM certificate"]),
            (good.key, good.key, ["'\(good.key)' holds no usable PEM certificate"]),
            (good.certificate, missing, ["cannot open the private key file '\(missing)'"]),
            (good.certificate, garbage, ["'\(garbage)' holds no usable PEM private key"]),
            (good.certificate, encrypted, ["'\(encrypted)' holds no usable PEM private key"]),
            (good.certificate, other.key, ["'\(other.key)' does not belong", "'\(good.certificate)'"]),
        ]
        for (certificate, key, fragments) in cases {
            let error = #expect(throws: DTLSError.self) {
                try DTLSCertificate(certificatePath: certificate, privateKeyPath: key)
            }
            #expect(error?.code == .certificate)
            for fragment in fragments {
                #expect(error?.message.contains(fragment) == true, "\(error?.message ?? "")")
            }
        }
    }

    @Test("validity outside 1...365 days is refused", arguments: [0, -1, 366])
    func validity(days: Int) {
        let error = #expect(throws: DTLSError.self) { try DTLSCertificate.generate(validityDays: days) }
        #expect(error?.code == .invalidConfiguration)
    }
}
