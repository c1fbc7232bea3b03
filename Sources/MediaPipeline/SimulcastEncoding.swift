/// One simulcast layer's encoding (the W3C word) as `--simulcast-layers` describes it
/// (Docs/simulcast.md): its RFC 8851 rid, how much smaller than the captured picture, how many
/// pictures a second at most, and its bitrate. Layer 0 is the main encoder (full size, full rate, the rest of the estimate); the
/// others are extra x264 encodes of the same converted picture.
public struct SimulcastEncoding: Sendable, Equatable {
    public var rid: String
    /// The encoded size is the picture's divided by this: 1, 2 or 4.
    public var scaleDown: Int
    public var frameRate: Int
    /// The layer's bitrate, kbit/s; for layer 0 its ceiling (below it, layer 0 follows its
    /// receivers' estimates; `VideoPath.applyBitrate`).
    public var bitrateKbps: Int

    public init(rid: String, scaleDown: Int, frameRate: Int, bitrateKbps: Int) {
        self.rid = rid
        self.scaleDown = scaleDown
        self.frameRate = frameRate
        self.bitrateKbps = bitrateKbps
    }

    /// Screen content's pattern, highest (costliest) first, as SFUs rank layers: `f` the full
    /// picture at the full rate; `q` half the picture at 15 fps when it is at least 960 wide
    /// (below, half size blurs text too much to be worth a layer); `l` the full picture at
    /// 5 fps (Chrome's screen-share simulcast: text stays as sharp, motion gives), the layer a
    /// slow link gets (Janus's substream 0).
    public static func defaults(width: Int, frameRate: Int, bitrateKbps: Int) -> [SimulcastEncoding] {
        var layers = [SimulcastEncoding(rid: "f", scaleDown: 1, frameRate: frameRate, bitrateKbps: bitrateKbps)]
        if width >= 960 {
            layers.append(SimulcastEncoding(rid: "q", scaleDown: 2, frameRate: min(15, frameRate), bitrateKbps: 400))
        }
        layers.append(SimulcastEncoding(rid: "l", scaleDown: 1, frameRate: min(5, frameRate), bitrateKbps: 250))
        return layers
    }

    /// What a receiver must allow to get each layer, bits per second, highest first
    /// (`MediaSender.Simulcast.needs`): a lower layer its bitrate; the top layer, whose rate
    /// follows its receivers, twice the largest lower layer's (below that it would look no
    /// better than the layer under it).
    public static func needs(of layers: [SimulcastEncoding]) -> [Int] {
        let lower = layers.dropFirst().map { $0.bitrateKbps * 1000 }
        guard let largest = lower.max() else { return [] }
        return [2 * largest] + lower
    }

    /// Janus takes at most three layers; RFC 8851 allows more, which no SFU we publish to reads.
    public static let maximumCount = 3

    /// Parses `NAME:SCALE:FPS:KBPS[,…]`, highest layer first, e.g. `f:1:30:1800,l:1:5:250`.
    /// The first layer is the main encoder's: scale 1 at the stream's frame rate.
    public static func parse(_ text: String, frameRate: Int) throws(SimulcastEncodingError) -> [SimulcastEncoding] {
        let items = text.split(separator: ",", omittingEmptySubsequences: false)
        guard (1...maximumCount).contains(items.count) else {
            throw SimulcastEncodingError("\(items.count) layers in '\(text)'; 1 to \(maximumCount) are allowed")
        }
        var layers: [SimulcastEncoding] = []
        for (index, item) in items.enumerated() {
            let fields = item.split(separator: ":", omittingEmptySubsequences: false)
            guard fields.count == 4 else {
                throw SimulcastEncodingError("layer \(index + 1) '\(item)' is not NAME:SCALE:FPS:KBPS")
            }
            let rid = String(fields[0])
            guard Self.isValidRID(rid) else {
                throw SimulcastEncodingError(
                    "layer \(index + 1) name '\(rid)' must be 1-15 letters, digits, '-' or '_' (RFC 8851 rid)"
                )
            }
            guard !layers.contains(where: { $0.rid == rid }) else {
                throw SimulcastEncodingError("layer name '\(rid)' appears twice")
            }
            guard let scale = Int(fields[1]), [1, 2, 4].contains(scale) else {
                throw SimulcastEncodingError("layer '\(rid)' scale '\(fields[1])' must be 1, 2 or 4")
            }
            guard let fps = Int(fields[2]), (1...frameRate).contains(fps) else {
                throw SimulcastEncodingError("layer '\(rid)' frame rate '\(fields[2])' must be 1...\(frameRate)")
            }
            guard let kbps = Int(fields[3]), (50...50_000).contains(kbps) else {
                throw SimulcastEncodingError("layer '\(rid)' bitrate '\(fields[3])' must be 50...50000 kbit/s")
            }
            if index == 0, scale != 1 || fps != frameRate {
                throw SimulcastEncodingError(
                    "the first layer '\(rid)' is the main encoder: scale 1 at \(frameRate) fps, not \(scale) at \(fps)"
                )
            }
            layers.append(SimulcastEncoding(rid: rid, scaleDown: scale, frameRate: fps, bitrateKbps: kbps))
        }
        return layers
    }

    /// RFC 8851 §10 `rid-id = 1*(alpha-numeric / "-" / "_")`, at most 15 characters (Janus).
    static func isValidRID(_ rid: String) -> Bool {
        (1...15).contains(rid.utf8.count)
            && rid.utf8.allSatisfy { $0.isASCIIAlphanumeric || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }
    }
}

/// A `--simulcast-layers` value that cannot be used, with what is wrong with it.
public struct SimulcastEncodingError: Error, CustomStringConvertible, Sendable {
    public let description: String
    init(_ description: String) { self.description = description }
}

extension UInt8 {
    fileprivate var isASCIIAlphanumeric: Bool {
        (0x30...0x39).contains(self) || (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self)
    }
}
