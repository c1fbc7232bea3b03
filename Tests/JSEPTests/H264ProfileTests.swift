import JSEP
import Testing

/// The profile rule (`H264ProfileLevelID.accepts`): may a stream of the second profile-level-id
/// be sent on a payload type offered with the first?
@Suite("H.264 profile-level-id matching")
struct H264ProfileTests {
    @Test(
        "offered accepts stream",
        arguments: [
            // Chromium lists Baseline first: a Constrained Baseline stream is a Baseline stream.
            ("42001f", "42e01f", true),
            ("42001f", "42c01f", true),
            ("42e01f", "42e01f", true),
            ("42c01f", "42e01f", true),
            // A Baseline stream may use FMO/ASO, which a Constrained Baseline decoder lacks.
            ("42e01f", "42001f", false),
            // Main and High decoders take every constraint_set1 stream (H.264 A.2.2, A.2.4).
            ("4d001f", "42e01f", true),
            ("64001f", "42e01f", true),
            ("640c1f", "42e01f", true),
            ("64001f", "4d001f", true),
            ("4d001f", "64001f", false),
            ("42001f", "4d001f", false),
            ("4d801f", "42e01f", true),
            ("58c01f", "42e01f", true),
            // Levels: the stream's must not exceed the offered one.
            ("42e028", "42e01f", true),
            ("42e01e", "42e01f", false),
            ("42e00a", "42e01f", false),
            ("42f00b", "42e00a", true),
            ("42f00b", "42e00b", false),
            // Profiles outside the named set match only themselves.
            ("f4001f", "42e01f", false),
            ("f4001f", "f4001f", true),
        ]
    )
    func accepts(_ offered: String, _ stream: String, _ expected: Bool) throws {
        let offeredID = try #require(H264ProfileLevelID(offered))
        let streamID = try #require(H264ProfileLevelID(stream))
        #expect(offeredID.accepts(streamID) == expected)
    }

    @Test("the answer keeps the offered profile bytes and states our level")
    func answer() throws {
        let stream = H264ProfileLevelID.constrainedBaseline31
        #expect(try #require(H264ProfileLevelID("42001f")).answer(sending: stream).description == "42001f")
        #expect(try #require(H264ProfileLevelID("42E028")).answer(sending: stream).description == "42e01f")
        #expect(try #require(H264ProfileLevelID("640c34")).answer(sending: stream).description == "640c1f")
    }

    @Test("profile-level-id text", arguments: ["", "42e01", "42e01f0", "42g01f", "+42e01"])
    func invalidText(_ text: String) {
        #expect(H264ProfileLevelID(text) == nil)
    }

    @Test("named profiles")
    func profiles() throws {
        #expect(try #require(H264ProfileLevelID("42e01f")).profile == .constrainedBaseline)
        #expect(try #require(H264ProfileLevelID("42001f")).profile == .baseline)
        #expect(try #require(H264ProfileLevelID("4d001f")).profile == .main)
        #expect(try #require(H264ProfileLevelID("640c1f")).profile == .constrainedHigh)
        #expect(try #require(H264ProfileLevelID("64001f")).profile == .high)
        #expect(try #require(H264ProfileLevelID("6e001f")).profile == .other)
    }
}
