#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// RFC 6184 §8.1 `a=fmtp` parameters for H.264, derived from the stream's actual parameter sets so
/// the SDP can never disagree with the bitstream.
public struct H264FormatParameters: Sendable, Hashable {
    /// RFC 6184 §6.3: 1 = non-interleaved mode (single NAL units, STAP-A, FU-A), what we send.
    public var packetizationMode: Int
    /// The SPS NAL unit (type 7) without start code, header byte included.
    public let sequenceParameterSet: [UInt8]
    /// The PPS NAL unit (type 8) without start code, header byte included.
    public let pictureParameterSet: [UInt8]

    /// Validates that the parameter sets are NAL units of types 7 and 8 without Annex B start codes.
    public init(sequenceParameterSet: [UInt8], pictureParameterSet: [UInt8], packetizationMode: Int = 1) throws {
        try Self.check(sequenceParameterSet, type: 7, role: "SPS", minimumLength: 4)
        try Self.check(pictureParameterSet, type: 8, role: "PPS", minimumLength: 2)
        self.sequenceParameterSet = sequenceParameterSet
        self.pictureParameterSet = pictureParameterSet
        self.packetizationMode = packetizationMode
    }

    /// RFC 6184 §8.1 `profile-level-id`: SPS bytes 1-3 (profile_idc, the constraint_set flags
    /// byte, level_idc, H.264 §7.3.2.1.1) as six lowercase hex digits, e.g. `42c01f`.
    ///
    /// These bytes precede any emulation-prevention byte: profile_idc is never zero, so no
    /// `00 00` pair can occur before level_idc.
    public var profileLevelID: String {
        Self.hex(sequenceParameterSet[1...3])
    }

    /// The `profile-level-id` of an SPS NAL unit; throws if it is not one.
    public static func profileLevelID(sequenceParameterSet sps: [UInt8]) throws -> String {
        try check(sps, type: 7, role: "SPS", minimumLength: 4)
        return hex(sps[1...3])
    }

    /// `packetization-mode`, `profile-level-id`, `sprop-parameter-sets` in that order.
    public var formatParameters: [SDPFormatParameter] {
        [
            SDPFormatParameter(name: "packetization-mode", value: String(packetizationMode)),
            SDPFormatParameter(name: "profile-level-id", value: profileLevelID),
            SDPFormatParameter(
                name: "sprop-parameter-sets",
                value: Data(sequenceParameterSet).base64EncodedString() + ","
                    + Data(pictureParameterSet).base64EncodedString()
            ),
        ]
    }

    private static func check(_ nal: [UInt8], type: UInt8, role: String, minimumLength: Int) throws {
        guard nal.count >= minimumLength else {
            throw SDPError(
                code: .invalidParameterSet,
                message: "\(role) of \(nal.count) bytes is too short (at least \(minimumLength))"
            )
        }
        if nal.starts(with: [0, 0, 1]) || nal.starts(with: [0, 0, 0, 1]) {
            throw SDPError(
                code: .invalidParameterSet,
                message: "\(role) starts with an Annex B start code; pass the NAL unit without it"
            )
        }
        guard nal[0] & 0x80 == 0, nal[0] & 0x1F == type else {
            throw SDPError(
                code: .invalidParameterSet,
                message: "\(role) header byte 0x\(hex(nal[0...0])) is not a NAL unit of type \(type)"
            )
        }
    }

    private static func hex(_ bytes: ArraySlice<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
