import Foundation
import Ingest
import Testing

@Suite struct AddressTests {
    @Test func parsesUnixAndTCPAddresses() throws {
        #expect(try IngestAddress(parsing: "unix:/tmp/ingest.sock") == .unix(path: "/tmp/ingest.sock"))
        #expect(try IngestAddress(parsing: "unix:relative.sock") == .unix(path: "relative.sock"))
        #expect(try IngestAddress(parsing: "tcp:127.0.0.1:5000") == .tcp(host: "127.0.0.1", port: 5000))
        #expect(try IngestAddress(parsing: "tcp:[::1]:0") == .tcp(host: "::1", port: 0))
        #expect(try IngestAddress(parsing: "tcp:localhost:65535") == .tcp(host: "localhost", port: 65535))
        #expect("\(IngestAddress.tcp(host: "::1", port: 9))" == "tcp:[::1]:9")
        #expect("\(IngestAddress.unix(path: "/a"))" == "unix:/a")
    }

    @Test(arguments: [
        ("/tmp/ingest.sock", "is not unix:/path or tcp:HOST:PORT"),
        ("udp:127.0.0.1:5", "is not unix:/path or tcp:HOST:PORT"),
        ("unix:", "has no socket path"),
        ("unix:/" + String(repeating: "a", count: 107), "at most 107"),
        ("tcp:127.0.0.1", "has no port"),
        ("tcp:127.0.0.1:", "is not a port number"),
        ("tcp:127.0.0.1:70000", "is not a port number"),
        ("tcp:127.0.0.1:-1", "is not a port number"),
        ("tcp::5000", "has no host"),
        ("tcp:::1:5000", "IPv6 addresses go in brackets"),
        ("tcp:[::1:5000", "has no ']'"),
        ("tcp:[::1]5000", "needs ':PORT'"),
    ])
    func refusesBadAddresses(_ text: String, _ expected: String) {
        do {
            _ = try IngestAddress(parsing: text)
            Issue.record("'\(text)' was accepted")
        } catch {
            #expect(error.code == .invalidAddress)
            #expect(error.message.contains(expected), "\(error.message)")
        }
    }

    @Test func knowsLoopback() throws {
        for text in ["unix:/x", "tcp:127.0.0.1:1", "tcp:127.4.5.6:1", "tcp:[::1]:1", "tcp:localhost:1"] {
            #expect(try IngestAddress(parsing: text).isLoopback, "\(text)")
        }
        for text in ["tcp:0.0.0.0:1", "tcp:10.0.0.1:1", "tcp:[::]:1", "tcp:[::ffff:10.0.0.1]:1", "tcp:example.org:1"] {
            #expect(try !IngestAddress(parsing: text).isLoopback, "\(text)")
        }
    }

    @Test func theServerRefusesNonLoopbackTCP() async throws {
        do {
            _ = try await IngestServer.bind(.tcp(host: "0.0.0.0", port: 0), logger: quietLogger)
            Issue.record("bound to 0.0.0.0")
        } catch {
            #expect(error.code == .invalidAddress)
            #expect(error.message.contains("is not a loopback address"))
        }
    }

    @Test func theServerRefusesToReplaceARegularFile() async throws {
        let path = "/tmp/ingest-test-file-\(UInt32.random(in: 0...UInt32.max))"
        #expect(FileManager.default.createFile(atPath: path, contents: Data("not a socket".utf8)))
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            _ = try await IngestServer.bind(.unix(path: path), logger: quietLogger)
            Issue.record("replaced a regular file")
        } catch {
            #expect(error.code == .connection)
            #expect(error.message.contains("cannot listen on unix:\(path)"))
        }
    }
}
