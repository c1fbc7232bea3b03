import Testing

@testable import MediaPipeline

@Suite("--simulcast-layers")
struct SimulcastEncodingTests {
    @Test("the defaults: f, then q when 960 wide or more, then l at 5 fps")
    func defaults() {
        #expect(
            SimulcastEncoding.defaults(width: 1280, frameRate: 30, bitrateKbps: 1800) == [
                SimulcastEncoding(rid: "f", scaleDown: 1, frameRate: 30, bitrateKbps: 1800),
                SimulcastEncoding(rid: "q", scaleDown: 2, frameRate: 15, bitrateKbps: 400),
                SimulcastEncoding(rid: "l", scaleDown: 1, frameRate: 5, bitrateKbps: 250),
            ]
        )
        #expect(SimulcastEncoding.defaults(width: 640, frameRate: 10, bitrateKbps: 900).map(\.rid) == ["f", "l"])
    }

    @Test("a list is read as given, highest first")
    func parses() throws {
        #expect(
            try SimulcastEncoding.parse("hi:1:30:1500,lo-5_x:4:3:100", frameRate: 30) == [
                SimulcastEncoding(rid: "hi", scaleDown: 1, frameRate: 30, bitrateKbps: 1500),
                SimulcastEncoding(rid: "lo-5_x", scaleDown: 4, frameRate: 3, bitrateKbps: 100),
            ]
        )
    }

    @Test(
        "what cannot be used is refused, saying what",
        arguments: [
            ("", "layer 1 '' is not NAME:SCALE:FPS:KBPS"),
            ("f:1:30:1500,l:1:5:200,q:2:15:300,x:1:1:100", "4 layers in"),
            ("f:1:30", "layer 1 'f:1:30' is not NAME:SCALE:FPS:KBPS"),
            ("f.g:1:30:1500", "layer 1 name 'f.g' must be 1-15 letters"),
            ("abcdefghijklmnop:1:30:1500", "must be 1-15 letters"),
            ("f:1:30:1500,f:1:5:200", "layer name 'f' appears twice"),
            ("f:1:30:1500,l:3:5:200", "layer 'l' scale '3' must be 1, 2 or 4"),
            ("f:1:30:1500,l:1:31:200", "layer 'l' frame rate '31' must be 1...30"),
            ("f:1:30:1500,l:1:5:20", "layer 'l' bitrate '20' must be 50...50000"),
            ("f:2:30:1500", "the first layer 'f' is the main encoder: scale 1 at 30 fps, not 2 at 30"),
            ("f:1:15:1500", "the first layer 'f' is the main encoder"),
        ]
    )
    func refuses(text: String, message: String) {
        #expect {
            _ = try SimulcastEncoding.parse(text, frameRate: 30)
        } throws: { error in
            "\(error)".contains(message)
        }
    }
}
