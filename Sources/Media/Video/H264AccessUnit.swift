/// One encoded picture: the NAL units x264 produced for one input frame, in decode order,
/// without start codes or length prefixes.
///
/// The bytes live in one contiguous buffer with a range per NAL unit, so handing an access unit
/// to the packetizer costs one allocation per frame, not one per NAL unit.
public struct H264AccessUnit: Sendable {
    /// All NAL units back to back (no start codes).
    public var data: [UInt8]
    /// Where each NAL unit lies in `data`.
    public var nalRanges: [Range<Int>]
    /// Capture time of the source frame, nanoseconds on the monotonic clock.
    public var captureTime: UInt64
    /// True when the access unit holds an IDR picture (and, from our encoder, SPS and PPS before it).
    public var isKeyFrame: Bool
    /// The picture's quantizer as the encoder reports it (H.264's 0–51; lower is finer), if known.
    public var quantizer: Int?

    public init(data: [UInt8], nalRanges: [Range<Int>], captureTime: UInt64, isKeyFrame: Bool, quantizer: Int? = nil) {
        self.data = data
        self.nalRanges = nalRanges
        self.captureTime = captureTime
        self.isKeyFrame = isKeyFrame
        self.quantizer = quantizer
    }

    /// The NAL units as views into `data` (no copy).
    public var nalUnits: [ArraySlice<UInt8>] { nalRanges.map { data[$0] } }

    /// `nal_unit_type` (H.264 §7.3.1, the low five bits of the first byte) of each NAL unit.
    public var nalTypes: [UInt8] { nalRanges.map { data[$0.lowerBound] & 0x1F } }

    /// The access unit as an Annex B byte stream (4-byte start codes), as `.h264` files carry it.
    public func annexB() -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(data.count + 4 * nalRanges.count)
        for r in nalRanges {
            out.append(contentsOf: [0, 0, 0, 1])
            out.append(contentsOf: data[r])
        }
        return out
    }
}
