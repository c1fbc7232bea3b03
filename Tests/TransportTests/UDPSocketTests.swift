import Testing

@testable import Transport

@Suite struct UDPSocketTests {
    @Test(arguments: [
        ("127.0.0.1:5004", "127.0.0.1", 5004, "127.0.0.1:5004"),
        ("[::1]:6000", "::1", 6000, "[::1]:6000"),
        ("0.0.0.0:0", "0.0.0.0", 0, "0.0.0.0:0"),
    ])
    func parsesAddresses(text: String, host: String, port: Int, shown: String) throws {
        let address = try UDPAddress(parsing: text)
        #expect(address.host == host && address.port == port && address.description == shown)
        #expect(try UDPAddress(host: host, port: port) == address)
    }

    @Test(arguments: [
        ("localhost:5004", "'localhost' is not a numeric IPv4 or IPv6 address"),
        ("127.0.0.1", "'127.0.0.1' is not HOST:PORT"),
        ("127.0.0.1:http", "'127.0.0.1:http': port 'http' is not a number"),
        ("127.0.0.1:70000", "port 70000 is outside 0...65535"),
        ("[::1:5", "'[::1:5' is not [IPv6]:PORT"),
    ])
    func rejectsBadAddresses(text: String, message: String) {
        #expect { try UDPAddress(parsing: text) } throws: { ($0 as? TransportError)?.message == message }
    }

    @Test func sendsAndReceivesOnLoopback() throws {
        let receiver = try UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: 0))
        let sender = try UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: 0))
        #expect(receiver.localAddress.port != 0)
        let payload: [UInt8] = [0x80, 0x60, 0, 1, 9, 9]
        let ok = payload.withUnsafeBytes { sender.send($0, to: receiver.localAddress) }
        #expect(ok)
        #expect(receiver.waitReadable(milliseconds: 1000))
        var buffer = [UInt8](repeating: 0, count: 2048)
        let got = try #require(buffer.withUnsafeMutableBytes { receiver.receive(into: $0) })
        #expect(Array(buffer[0..<got.length]) == payload)
        #expect(got.from == sender.localAddress)
    }

    @Test func bindingABusyPortNamesIt() throws {
        let first = try UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: 0))
        let port = first.localAddress.port
        #expect { try UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: port)) } throws: {
            ($0 as? TransportError)?.message == "cannot bind UDP 127.0.0.1:\(port): Address already in use"
        }
    }
}
