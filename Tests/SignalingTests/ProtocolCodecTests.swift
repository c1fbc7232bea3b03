import NIOCore
import SignalingAuth
import SignalingProtocol
import Testing

@Suite("Wire format")
struct ProtocolCodecTests {
    @Test("a join request encodes to the exact line in the spec")
    func joinLineBytes() throws {
        let request = ClientRequest(
            id: .number(1),
            .join(.init(room: try Fixture.room("123456"), uid: try Fixture.uid("alice_sub"), role: .publisher))
        )
        let line = try SignalingCodec.encodeLine(request)
        let expected =
            #"{"id":1,"role":"publisher","room":"123456","type":"join","uid":"alice_sub","version":1}"# + "\n"
        #expect(line == Array(expected.utf8))
    }

    @Test("a joined reply encodes members with their owner, keys sorted")
    func joinedLineBytes() throws {
        let joined = ServerMessage.Joined(
            room: try Fixture.room("123456"),
            uid: try Fixture.uid("bob"),
            role: .subscriber,
            members: [Member(uid: try Fixture.uid("alice_sub"), role: .publisher)],
            streams: [],
            idleTimeout: 30,
            resume: "00ff"
        )
        let line = try SignalingCodec.encodeLine(ServerEnvelope(id: .string("j"), .joined(joined)))
        let expected =
            #"{"id":"j","idleTimeout":30,"members":[{"owner":"alice","role":"publisher","uid":"alice_sub"}],"#
            + #""resume":"00ff","role":"subscriber","room":"123456","streams":[],"type":"joined","uid":"bob","version":1}"#
            + "\n"
        #expect(String(decoding: line, as: UTF8.self) == expected)
    }

    @Test("every client message survives encode then decode")
    func clientRoundTrip() throws {
        let alice = try Fixture.uid("alice")
        let messages: [ClientMessage] = [
            .join(.init(room: try Fixture.room("r"), uid: alice, role: .subscriber, token: "t", resume: "r")),
            .leave,
            .publish(.init(stream: Fixture.screen())),
            .unpublish(.init(kind: .camera)),
            .subscribe(.init(publisher: alice, kind: .screen, receive: Fixture.receive())),
            .subscribe(.init(publisher: alice, receive: Fixture.receive())),
            .subscribe(.init(publisher: alice, kind: .screen, receive: ReceiveDescription(offer: Fixture.screenSDP))),
            .unsubscribe(.init(publisher: alice)),
            .ping,
            .signal(
                .init(
                    to: alice,
                    payload: .object(["n": .integer(7), "x": .array([.null, .bool(true), .number(0.5)])])
                )
            ),
            .subscribeAnswer(.init(subscriber: alice, kind: .screen, sdp: Fixture.screenSDP)),
            .subscribeReject(.init(subscriber: alice, kind: .camera, reason: "no common crypto suite")),
            .streamState(.init(kind: .screen, state: .still)),
            .streamState(.init(kind: .camera, state: .moving)),
        ]
        for (index, message) in messages.enumerated() {
            let request = ClientRequest(id: index.isMultiple(of: 2) ? .number(Int64(index)) : nil, message)
            let line = try SignalingCodec.encodeLine(request)
            #expect(line.last == UInt8(ascii: "\n"))
            let decoded = try SignalingCodec.decodeRequest(line.dropLast()).get()
            #expect(decoded == request)
        }
    }

    @Test("every server message survives encode then decode")
    func serverRoundTrip() throws {
        let alice = try Fixture.uid("alice")
        let stream = PublishedStream(uid: try Fixture.uid("alice_sub"), description: Fixture.screen())
        let still = PublishedStream(uid: try Fixture.uid("alice_sub"), description: Fixture.screen(), state: .still)
        let messages: [ServerMessage] = [
            .joined(
                .init(
                    room: try Fixture.room("r"),
                    uid: alice,
                    role: .publisher,
                    members: [],
                    streams: [stream, still],
                    idleTimeout: 2.5,
                    resume: "x"
                )
            ),
            .pong,
            .ack(.init(of: "publish")),
            .subscribed(.init(publisher: alice, kind: .screen, sdp: Fixture.screenSDP)),
            .error(SignalingError(.roomFull, "full")),
            .memberJoined(.init(member: Member(uid: alice, role: .subscriber))),
            .memberLeft(.init(uid: alice, reason: .timeout)),
            .streamPublished(.init(stream: stream)),
            .streamPublished(.init(stream: still)),
            .streamState(.init(uid: alice, kind: .screen, state: .still)),
            .streamUnpublished(.init(uid: alice, kind: .camera)),
            .subscribeRequest(.init(subscriber: alice, kind: .screen, receive: Fixture.receive())),
            .unsubscribed(.init(publisher: alice, kind: .screen, reason: .publisherLeft)),
            .subscriberLeft(.init(subscriber: alice, kind: .screen, reason: .unsubscribed)),
            .signal(.init(from: alice, payload: .string("hi"))),
            .goodbye(.init(reason: .serverShutdown, message: "bye")),
        ]
        for message in messages {
            let envelope = ServerEnvelope(id: .string("7"), message)
            let line = try SignalingCodec.encodeLine(envelope)
            #expect(try SignalingCodec.decodeServerLine(line.dropLast()) == envelope)
        }
    }

    @Test("a server message type the client does not know is skipped, not an error")
    func unknownServerType() throws {
        #expect(try SignalingCodec.decodeServerLine(Array(#"{"type":"future-thing","x":1}"#.utf8)) == nil)
    }

    @Test("any JSON value is a payload: huge integers become doubles, nesting and null survive")
    func payloadsOfEveryKind() throws {
        let line = #"{"type":"signal","to":"b","payload":[null,true,"s",1e30,123456789012345678901,{"a":[]}]}"#
        let request = try SignalingCodec.decodeRequest(Array(line.utf8)).get()
        guard case .signal(let signal) = request.message else {
            Issue.record("\(request)")
            return
        }
        #expect(
            signal.payload
                == .array([
                    .null, .bool(true), .string("s"), .number(1e30), .number(123_456_789_012_345_683_968),
                    .object(["a": .array([])]),
                ])
        )
    }

    @Test("relayed integers stay integers")
    func integersStayIntegers() throws {
        let request = ClientRequest(
            .signal(.init(to: try Fixture.uid("b"), payload: .array([.integer(7), .number(7.5)])))
        )
        let text = String(decoding: try SignalingCodec.encodeLine(request), as: UTF8.self)
        #expect(text.contains(#""payload":[7,7.5]"#))
    }

    @Test(
        "bad lines get the code that names the rule, the field, and the request id when readable",
        arguments: [
            ("not json", SignalingError.Code.badJSON, nil as RequestID?, "line is not valid JSON" as String?),
            ("[1,2]", .badJSON, nil, "a message must be a JSON object"),
            (#"{"id":4}"#, .missingField, .number(4), #"missing field "type""#),
            (#"{"type":7,"id":"x"}"#, .invalidField, .string("x"), #"field "type" must be a string"#),
            (#"{"type":"ping","id":{"a":1}}"#, .invalidField, nil, nil),
            (
                #"{"type":"dance","id":5}"#, .unknownType, .number(5),
                #"unknown message type "dance"; expected one of join, leave, publish, unpublish, subscribe, unsubscribe, ping, signal, subscribe-answer, subscribe-reject, stream-state"#
            ),
            (#"{"type":"join","id":6}"#, .missingField, .number(6), #"join: missing field "version""#),
            // Another version is named before anything else is checked: no role, a bad room.
            (
                #"{"type":"join","id":61,"version":999}"#, .versionMismatch, .number(61),
                "this server speaks protocol version 1; the client sent version 999"
            ),
            (
                #"{"type":"join","id":62,"version":2,"room":"a b","uid":"","role":"admin","extra":1}"#,
                .versionMismatch, .number(62), "this server speaks protocol version 1; the client sent version 2"
            ),
            (
                #"{"type":"join","id":7,"version":"1","room":"r","uid":"u","role":"publisher"}"#, .invalidField,
                .number(7), #"join: field "version" must be an integer"#
            ),
            (
                #"{"type":"join","id":8,"version":1,"room":"a b","uid":"u","role":"publisher"}"#, .invalidRoom,
                .number(8), #"join: field "room": "a b" is not 1–64 characters of A-Z a-z 0-9 _ -"#
            ),
            (
                #"{"type":"join","id":9,"version":1,"room":"r","uid":"","role":"publisher"}"#, .invalidUID,
                .number(9), #"join: field "uid": "" is not 1–64 characters of A-Z a-z 0-9 _ -"#
            ),
            (
                #"{"type":"join","id":10,"version":1,"room":"r","uid":"u","role":"admin"}"#, .invalidField,
                .number(10), #"join: field "role": "admin" is not "publisher" or "subscriber""#
            ),
            (
                #"{"type":"publish","id":11,"stream":{"kind":"screen","codecs":["H264",3],"sdp":"v=0"}}"#,
                .invalidField, .number(11), #"publish: field "stream.codecs[1]" must be a string"#
            ),
            (
                #"{"type":"publish","id":12,"stream":{"kind":"screen","codecs":["H264"],"sdp":"hello"}}"#,
                .invalidField, .number(12), #"publish: field "stream.sdp" must be an SDP starting with "v=0""#
            ),
            (
                #"{"type":"publish","id":13,"stream":null}"#, .invalidField, .number(13),
                #"publish: field "stream" must be an object, not null"#
            ),
            (
                #"{"type":"subscribe","id":14,"publisher":"a","receive":{"address":"10.0.0.1","videoPort":70000,"rtcpMux":true,"cryptoSuites":[]}}"#,
                .invalidField, .number(14), #"subscribe: field "receive.videoPort": 70000 is not a port number 1–65535"#
            ),
            (
                #"{"type":"subscribe","id":15,"publisher":"a","receive":{"address":"10.0.0.1","rtcpMux":true,"cryptoSuites":[]}}"#,
                .missingField, .number(15), #"subscribe: field "receive" needs "videoPort", "audioPort" or both"#
            ),
            (
                #"{"type":"subscribe","id":16,"publisher":"a","receive":{"address":"x y","audioPort":5000,"rtcpMux":true,"cryptoSuites":[]}}"#,
                .invalidField, .number(16),
                #"subscribe: field "receive.address": "x y" is not an IP address or host name"#
            ),
            (
                #"{"type":"signal","id":17,"to":"b"}"#, .missingField, .number(17), #"signal: missing field "payload""#
            ),
            // Numbers no Swift integer or double holds: Foundation would call the line invalid JSON.
            (
                #"{"type":"join","id":18,"version":1e308,"room":"r","uid":"u","role":"publisher"}"#, .invalidField,
                .number(18), #"join: field "version" must be an integer in the signed 64-bit range"#
            ),
            (
                #"{"type":"signal","id":19,"to":"b","payload":1e400}"#, .invalidField, .number(19),
                #"signal: field "payload" holds a number outside the range of a 64-bit double"#
            ),
            (
                #"{"type":"signal","id":20,"to":"b","payload":{"sdp":"x","list":[1,-1e999]}}"#, .invalidField,
                .number(20), #"signal: field "payload.list[1]" holds a number outside the range of a 64-bit double"#
            ),
            // A client's keys in the path: escaped, cut, a deep path shortened (found by FuzzSignalingLine).
            (
                #"{"type":"signal","id":90,"to":"b","payload":{"\u0001":1e999}}"#, .invalidField, .number(90),
                #"signal: field "payload.\u{1}" holds a number outside the range of a 64-bit double"#
            ),
            (
                #"{"type":"signal","id":91,"to":"b","payload":{"a\u007f\"\\":1e999}}"#, .invalidField, .number(91),
                #"signal: field "payload.a\u{7f}\"\\" holds a number outside the range of a 64-bit double"#
            ),
            (
                #"{"type":"signal","id":92,"to":"b","payload":{"\#(String(repeating: "k", count: 50))":1e999}}"#,
                .invalidField, .number(92),
                #"signal: field "payload.\#(String(repeating: "k", count: 40))…" holds a number outside the range of a 64-bit double"#
            ),
            (
                #"{"type":"signal","id":93,"to":"b","payload":{"a":{"b":{"c":{"d":{"e":{"f":{"g":[0,1e999]}}}}}}}}"#,
                .invalidField, .number(93),
                #"signal: field "payload.a.….d.e.f.g[1]" holds a number outside the range of a 64-bit double"#
            ),
            (
                #"{"type":"subscribe","id":21,"publisher":"a","receive":{"address":"10.0.0.1","videoPort":1e30,"rtcpMux":true,"cryptoSuites":[]}}"#,
                .invalidField, .number(21),
                #"subscribe: field "receive.videoPort" must be an integer in the signed 64-bit range"#
            ),
            // A WebRTC offer says where to send by itself: ports beside it are a client's mistake.
            (
                #"{"type":"subscribe","id":22,"publisher":"a","receive":{"offer":"v=0\r\n","videoPort":5000}}"#,
                .invalidField, .number(22),
                #"subscribe: field "receive.videoPort" is not allowed with "offer" (the offer says where to send)"#
            ),
            (
                #"{"type":"subscribe","id":23,"publisher":"a","receive":{"offer":"hello"}}"#,
                .invalidField, .number(23), #"subscribe: field "receive.offer" must be an SDP starting with "v=0""#
            ),
            (
                #"{"type":"subscribe","id":24,"publisher":"a","receive":{"offer":7}}"#,
                .invalidField, .number(24), #"subscribe: field "receive.offer" must be a string"#
            ),
            // RFC 8866 §5's shape: what JSON would escape six-fold, or what is no SDP line.
            (
                #"{"type":"publish","id":25,"stream":{"kind":"screen","codecs":["H264"],"sdp":"v=0\r\ns=\u0001\r\n"}}"#,
                .invalidField, .number(25),
                #"publish: field "stream.sdp" is not an SDP: line 2 has a control character (0x1)"#
            ),
            (
                #"{"type":"publish","id":26,"stream":{"kind":"screen","codecs":["H264"],"sdp":"v=0\r\n\r\ns=-\r\n"}}"#,
                .invalidField, .number(26), #"publish: field "stream.sdp" is not an SDP: line 2 is empty"#
            ),
            (
                #"{"type":"subscribe-answer","id":27,"subscriber":"a","kind":"screen","sdp":"v=0\nS=x\n"}"#,
                .invalidField, .number(27),
                #"subscribe-answer: field "sdp" is not an SDP: line 2 does not start with a lower-case type letter"#
            ),
            (
                #"{"type":"subscribe","id":28,"publisher":"a","receive":{"offer":"v=0\r\na\r\n"}}"#,
                .invalidField, .number(28),
                #"subscribe: field "receive.offer" is not an SDP: line 2 has no "=" after its type"#
            ),
            (
                #"{"type":"subscribe","id":29,"publisher":"a","receive":{"offer":"v=0\ra=x\r\n"}}"#,
                .invalidField, .number(29),
                #"subscribe: field "receive.offer" is not an SDP: line 1 has a carriage return that does not end it"#
            ),
            (
                #"{"type":"subscribe","id":30,"publisher":"a","receive":{"offer":"v=0\r\na=x\u007f\r\n"}}"#,
                .invalidField, .number(30),
                #"subscribe: field "receive.offer" is not an SDP: line 2 has a control character (0x7f)"#
            ),
            (
                #"{"type":"subscribe","id":31,"publisher":"a","receive":{"offer":"v=0\ns=-\nx\n"}}"#,
                .invalidField, .number(31),
                #"subscribe: field "receive.offer" is not an SDP: line 3 has no "=" after its type"#
            ),
        ]
    )
    func badLines(line: String, code: SignalingError.Code, id: RequestID?, message: String?) {
        switch SignalingCodec.decodeRequest(Array(line.utf8)) {
        case .success(let request):
            Issue.record("\(line) decoded as \(request)")
        case .failure(let failure):
            #expect(failure.error.code == code)
            #expect(failure.id == id)
            if let message {
                #expect(failure.error.message == message)
            }
        }
    }

    @Test("a WebRTC subscribe carries only the offer, on the wire and back")
    func offerSubscribeLine() throws {
        let request = ClientRequest(
            id: .number(1),
            .subscribe(.init(publisher: try Fixture.uid("alice"), receive: ReceiveDescription(offer: "v=0\r\n")))
        )
        let line = String(decoding: try SignalingCodec.encodeLine(request), as: UTF8.self)
        #expect(line.contains(#""receive":{"offer":"v=0\r\n"}"#), "\(line)")
        let decoded = try SignalingCodec.decodeRequest(Array(line.utf8.dropLast())).get()
        guard case .subscribe(let subscribe) = decoded.message else {
            Issue.record("not a subscribe: \(decoded)")
            return
        }
        #expect(subscribe.receive.offer == "v=0\r\n")
        #expect(subscribe.receive.videoPort == nil && subscribe.receive.cryptoSuites.isEmpty)
    }

    @Test("unknown fields are ignored so newer clients still work")
    func unknownFieldsIgnored() throws {
        let line = #"{"type":"ping","id":1,"future":{"deep":[1,2,3]}}"#
        #expect(try SignalingCodec.decodeRequest(Array(line.utf8)).get() == ClientRequest(id: .number(1), .ping))
    }

    @Test("deeply nested JSON is refused, not a crash")
    func deepNesting() {
        let line = String(repeating: "[", count: 30_000) + String(repeating: "]", count: 30_000)
        guard case .failure(let failure) = SignalingCodec.decodeRequest(Array(line.utf8)) else {
            Issue.record("nested arrays decoded")
            return
        }
        #expect(failure.error.code == .badJSON)
        let payload =
            #"{"type":"signal","id":1,"to":"b","payload":"# + String(repeating: "[", count: 30_000)
            + String(repeating: "]", count: 30_000) + "}"
        guard case .failure(let nested) = SignalingCodec.decodeRequest(Array(payload.utf8)) else {
            Issue.record("nested payload decoded")
            return
        }
        #expect(nested.id == nil || nested.id == .number(1))
    }

    @Test("invalid UTF-8 is bad JSON")
    func invalidUTF8() {
        let bytes: [UInt8] = Array(#"{"type":"ping","id":""#.utf8) + [0xFF, 0xFE] + Array(#""}"#.utf8)
        guard case .failure(let failure) = SignalingCodec.decodeRequest(bytes) else {
            Issue.record("invalid UTF-8 decoded")
            return
        }
        #expect(failure.error.code == .badJSON)
    }
}

@Suite("Names")
struct IdentifierTests {
    @Test("rooms and uids are 1–64 characters of [A-Za-z0-9_-]")
    func identifierRule() {
        #expect(IdentifierRule.isValid("a"))
        #expect(IdentifierRule.isValid("Az09_-"))
        #expect(IdentifierRule.isValid(String(repeating: "x", count: 64)))
        #expect(!IdentifierRule.isValid(String(repeating: "x", count: 65)))
        #expect(!IdentifierRule.isValid(""))
        #expect(!IdentifierRule.isValid("a b"))
        #expect(!IdentifierRule.isValid("a.b"))
        #expect(!IdentifierRule.isValid("é"))
        #expect(!IdentifierRule.isValid("a\n"))
    }

    @Test("a _sub uid's owner is the uid before the suffix")
    func owner() throws {
        #expect(try Fixture.uid("alice_sub").owner == Fixture.uid("alice"))
        #expect(try Fixture.uid("a_sub_sub").owner == Fixture.uid("a_sub"))
        #expect(try Fixture.uid("alice").owner == nil)
        #expect(try Fixture.uid("_sub").owner == nil)
        #expect(try Fixture.uid("alice_subx").owner == nil)
    }

    @Test("invalid names are refused with a message naming them")
    func invalidNames() {
        #expect(throws: SignalingError(.invalidRoom, #"room "a/b" must be 1–64 characters of A-Z a-z 0-9 _ -"#)) {
            try RoomID(validating: "a/b")
        }
        #expect(throws: SignalingError(.invalidUID, #"uid "" must be 1–64 characters of A-Z a-z 0-9 _ -"#)) {
            try MemberID(validating: "")
        }
    }
}

@Suite("Tokens")
struct TokenTests {
    // Expected signatures computed independently with:
    // printf 'v1\nroom1\nalice\n2000000000' | openssl dgst -sha256 -hmac secret -binary | base64 | tr '+/' '-_' | tr -d '='
    @Test("tokens match an independent HMAC-SHA256 computation")
    func knownVectors() throws {
        #expect(
            SignalingToken.make(
                room: try Fixture.room("room1"),
                uid: try Fixture.uid("alice"),
                expiry: 2_000_000_000,
                secret: "secret"
            )
                == "v1.2000000000.T6t-q8eubBpyZPOmUUkc7LFSY5j_NWQV_ltUx_f3hNU"
        )
        #expect(
            SignalingToken.make(
                room: try Fixture.room("r1"),
                uid: try Fixture.uid("alice_sub"),
                expiry: 1_700_000_000,
                secret: "correct horse"
            ) == "v1.1700000000.RAOPHroV6uydA8fT-k8E4qlADySI07YclLvtor_0ADI"
        )
    }

    @Test("verification accepts its own token and names each failure")
    func verification() throws {
        let room = try Fixture.room("room1")
        let alice = try Fixture.uid("alice")
        let token = SignalingToken.make(room: room, uid: alice, expiry: 2_000, secret: "s3")
        try SignalingToken.verify(token, room: room, uid: alice, secret: "s3", now: 1_999)
        #expect(throws: SignalingError(.unauthorized, "token expired at 2000 (Unix time); it is now 2000")) {
            try SignalingToken.verify(token, room: room, uid: alice, secret: "s3", now: 2_000)
        }
        let mismatch = SignalingError(
            .unauthorized,
            #"token is not valid for room "room1" and uid "alice" (wrong secret, or made for another room or uid)"#
        )
        #expect(throws: mismatch) {
            try SignalingToken.verify(token, room: room, uid: alice, secret: "other", now: 1)
        }
        #expect(throws: SignalingError.self) {
            try SignalingToken.verify(token, room: try Fixture.room("room2"), uid: alice, secret: "s3", now: 1)
        }
        for malformed in ["", "v1", "v2.2000.abc", "v1.-5.abc", "v1.20x0.abc", "v1.2000.***", "v1.2000.a.b"] {
            #expect(throws: SignalingError(.unauthorized, "token is malformed: expected v1.<expiry>.<signature>")) {
                try SignalingToken.verify(malformed, room: room, uid: alice, secret: "s3", now: 1)
            }
        }
    }
}

@Suite("Line framing")
struct LineFramingTests {
    private func decodeAll(_ chunks: [String], limit: Int = 16) throws -> [String] {
        var decoder = BoundedLineDecoder(maxLineBytes: limit)
        var buffer = ByteBuffer()
        var lines: [String] = []
        for chunk in chunks {
            buffer.writeString(chunk)
            while let line = try decoder.decode(buffer: &buffer) {
                lines.append(String(buffer: line))
            }
        }
        return lines
    }

    @Test("splits at newlines across chunks and drops a CR before the newline")
    func splitting() throws {
        #expect(try decodeAll(["ab", "c\nde", "f\r\ng\n", "\n"]) == ["abc", "def", "g", ""])
    }

    @Test("a line of exactly the limit passes; one byte more fails before its newline arrives")
    func limit() throws {
        #expect(try decodeAll([String(repeating: "x", count: 16) + "\n"]) == [String(repeating: "x", count: 16)])
        #expect(throws: SignalingError.self) {
            try decodeAll([String(repeating: "x", count: 17)])
        }
        do {
            _ = try decodeAll(["123456789", "01234567"])
            Issue.record("17 bytes without newline were accepted")
        } catch let error as SignalingError {
            #expect(error.code == .lineTooLong)
            #expect(error.message == "a line is longer than 16 bytes; the connection will be closed")
        }
    }

    @Test("the protocol limit is 64 KiB")
    func protocolLimit() {
        #expect(SignalingProtocol.maxLineBytes == 65_536)
        #expect(BoundedLineDecoder().maxLineBytes == 65_536)
    }

    @Test(
        "the client's decoder reads past an over-long line and reports its length; the lines around it are whole",
        arguments: [
            // The same bytes in different chunkings.
            [["one\n" + String(repeating: "x", count: 40) + "\r\ntwo\n"]],
            [["one\nxxxxxxxxxxxxxxxxxxxx", "xxxxxxxxxxxxxxxxxxxx", "\r", "\ntw", "o\n"]],
            [
                [
                    "o", "n", "e", "\n", String(repeating: "x", count: 17), String(repeating: "x", count: 23) + "\r\n",
                    "two\n",
                ]
            ],
        ]
    )
    func skippingDecoder(_ chunkings: [[String]]) throws {
        for chunks in chunkings {
            var decoder = SkippingLineDecoder(maxLineBytes: 16)
            var buffer = ByteBuffer()
            var seen: [String] = []
            for chunk in chunks {
                buffer.writeString(chunk)
                while let decoded = try decoder.decode(buffer: &buffer) {
                    switch decoded {
                    case .line(let line): seen.append(String(buffer: line))
                    case .skipped(let bytes): seen.append("skipped \(bytes)")
                    }
                }
            }
            // 40 x and the CR: the CR of an over-long line is not taken off.
            #expect(seen == ["one", "skipped 41", "two"], "\(chunks)")
            #expect(buffer.readableBytes == 0)
        }
    }

    @Test("an over-long line cut off by the end of input is reported skipped")
    func skippingDecoderAtEnd() throws {
        var decoder = SkippingLineDecoder(maxLineBytes: 4)
        var buffer = ByteBuffer(string: "abcdefgh")
        #expect(try decoder.decode(buffer: &buffer) == nil)
        buffer.writeString("ij")
        #expect(try decoder.decode(buffer: &buffer) == nil)
        #expect(try decoder.decodeLast(buffer: &buffer, seenEOF: true) == .skipped(bytes: 10))
        #expect(try decoder.decodeLast(buffer: &buffer, seenEOF: true) == nil)
    }

    @Test("no end encodes a line over the limit: encodeLine throws line-too-long")
    func encodingLimit() throws {
        let fits = ClientRequest(.signal(.init(to: try MemberID(validating: "p"), payload: .string(""))))
        let overhead = try SignalingCodec.encodeLine(fits).count - 1
        let payload = { (count: Int) in
            ClientRequest(
                .signal(
                    .init(to: try MemberID(validating: "p"), payload: .string(String(repeating: "x", count: count)))
                )
            )
        }
        #expect(try SignalingCodec.encodeLine(payload(65_536 - overhead)).count == 65_537)
        do {
            _ = try SignalingCodec.encodeLine(payload(65_537 - overhead))
            Issue.record("a 65,537-byte line was encoded")
        } catch let error as SignalingError {
            #expect(error.code == .lineTooLong)
            #expect(error.message == "signal would be a 65537-byte line, longer than the 65536-byte limit")
        }
    }

    @Test("an unterminated last line is still a line at end of input")
    func lastLine() throws {
        var decoder = BoundedLineDecoder(maxLineBytes: 16)
        var buffer = ByteBuffer(string: "one\ntwo")
        #expect(try decoder.decode(buffer: &buffer).map { String(buffer: $0) } == "one")
        #expect(try decoder.decode(buffer: &buffer) == nil)
        #expect(try decoder.decodeLast(buffer: &buffer, seenEOF: true).map { String(buffer: $0) } == "two")
        #expect(buffer.readableBytes == 0)
    }
}
