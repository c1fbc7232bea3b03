/// The 5-bit `nal_unit_type` of an H.264 NAL unit header (ITU-T H.264 Table 7-1), plus the
/// RTP aggregation and fragmentation types of RFC 6184 §5.2 (24–29).
///
/// The header byte is `F(1) | NRI(2) | type(5)`: F is the forbidden_zero_bit, NRI the
/// nal_ref_idc that says how much the unit matters for decoding.
public struct H264NALUnitType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x1F }

    /// The type of a NAL unit whose first (header) byte is `headerByte`.
    public init(headerByte: UInt8) { self.rawValue = headerByte & 0x1F }

    public static let nonIDRSlice = H264NALUnitType(rawValue: 1)
    public static let idrSlice = H264NALUnitType(rawValue: 5)
    public static let sei = H264NALUnitType(rawValue: 6)
    public static let sequenceParameterSet = H264NALUnitType(rawValue: 7)
    public static let pictureParameterSet = H264NALUnitType(rawValue: 8)
    public static let accessUnitDelimiter = H264NALUnitType(rawValue: 9)
    public static let endOfSequence = H264NALUnitType(rawValue: 10)
    public static let endOfStream = H264NALUnitType(rawValue: 11)
    public static let fillerData = H264NALUnitType(rawValue: 12)
    /// RFC 6184 §5.7.1: single-time aggregation packet without DON.
    public static let stapA = H264NALUnitType(rawValue: 24)
    public static let stapB = H264NALUnitType(rawValue: 25)
    public static let mtap16 = H264NALUnitType(rawValue: 26)
    public static let mtap24 = H264NALUnitType(rawValue: 27)
    /// RFC 6184 §5.8: fragmentation unit without DON.
    public static let fuA = H264NALUnitType(rawValue: 28)
    public static let fuB = H264NALUnitType(rawValue: 29)

    /// SPS or PPS: what a decoder needs before the first slice.
    public var isParameterSet: Bool { self == .sequenceParameterSet || self == .pictureParameterSet }

    public var description: String {
        switch self {
        case .nonIDRSlice: "non-IDR slice (1)"
        case .idrSlice: "IDR slice (5)"
        case .sei: "SEI (6)"
        case .sequenceParameterSet: "SPS (7)"
        case .pictureParameterSet: "PPS (8)"
        case .accessUnitDelimiter: "access unit delimiter (9)"
        case .fillerData: "filler data (12)"
        case .stapA: "STAP-A (24)"
        case .stapB: "STAP-B (25)"
        case .mtap16: "MTAP16 (26)"
        case .mtap24: "MTAP24 (27)"
        case .fuA: "FU-A (28)"
        case .fuB: "FU-B (29)"
        default: "NAL unit type \(rawValue)"
        }
    }
}
