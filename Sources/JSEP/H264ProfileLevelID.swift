/// RFC 6184 §8.1 `profile-level-id`: three bytes of the SPS (profile_idc, the constraint_set
/// flags, level_idc) as six hex digits, e.g. `42e01f`.
///
/// In an offer it describes what the offerer can decode; `accepts(_:)` decides whether a stream
/// of another profile-level-id may be sent on that payload type.
public struct H264ProfileLevelID: Sendable, Hashable, CustomStringConvertible {
    public var profileIDC: UInt8
    /// constraint_set0_flag … constraint_set5_flag in bits 7 … 2 (H.264 §7.4.2.1.1).
    public var constraints: UInt8
    public var levelIDC: UInt8

    public init(profileIDC: UInt8, constraints: UInt8, levelIDC: UInt8) {
        self.profileIDC = profileIDC
        self.constraints = constraints
        self.levelIDC = levelIDC
    }

    /// Six hex digits, either case; nil otherwise.
    public init?(_ text: some StringProtocol) {
        guard text.utf8.count == 6, let value = UInt32(text, radix: 16),
            text.utf8.allSatisfy({
                (0x30...0x39).contains($0) || (0x41...0x46).contains($0) || (0x61...0x66).contains($0)
            })
        else { return nil }
        self.init(
            profileIDC: UInt8(value >> 16),
            constraints: UInt8((value >> 8) & 0xFF),
            levelIDC: UInt8(value & 0xFF)
        )
    }

    /// Constrained Baseline, level 3.1: what our x264 configuration produces (1280x720 at 30 fps
    /// fits level 3.1's 3,600 macroblocks per frame and 108,000 per second).
    public static let constrainedBaseline31 = H264ProfileLevelID(profileIDC: 0x42, constraints: 0xE0, levelIDC: 0x1F)

    /// RFC 6184 §8.1: without `profile-level-id`, Baseline at level 1 is implied.
    public static let rfc6184Default = H264ProfileLevelID(profileIDC: 0x42, constraints: 0x00, levelIDC: 0x0A)

    /// Lower-case hex, as `a=fmtp` writes it.
    public var description: String {
        let digits = Array("0123456789abcdef".unicodeScalars)
        var text = ""
        for byte in [profileIDC, constraints, levelIDC] {
            text.unicodeScalars.append(digits[Int(byte >> 4)])
            text.unicodeScalars.append(digits[Int(byte & 0x0F)])
        }
        return text
    }

    /// The named H.264 profiles WebRTC stacks negotiate (the classes libwebrtc's
    /// `ParseProfileLevelId` distinguishes), from profile_idc and the constraint flags.
    public enum Profile: Sendable, Hashable {
        /// Baseline ∩ Main (H.264 A.2.1.1): no FMO, ASO or redundant slices.
        case constrainedBaseline
        case baseline
        case main
        /// High without B slices or interlace (A.2.4.2).
        case constrainedHigh
        case high
        /// Anything else (Extended, High 10, 4:4:4, …): matched only by identical bytes.
        case other
    }

    private func flag(_ index: Int) -> Bool { constraints & (0x80 >> UInt8(index)) != 0 }

    public var profile: Profile {
        switch profileIDC {
        // A.2.1.1: profile_idc 66 with constraint_set1_flag; Main (77) with constraint_set0_flag
        // or Extended (88) with both flags obey the same constraints.
        case 0x42: flag(1) ? .constrainedBaseline : .baseline
        case 0x4D: flag(0) ? .constrainedBaseline : .main
        case 0x58 where flag(0): flag(1) ? .constrainedBaseline : .baseline
        // A.2.4.2: High with constraint_set4_flag and constraint_set5_flag.
        case 0x64: flag(4) && flag(5) ? .constrainedHigh : .high
        default: .other
        }
    }

    /// The level for comparisons, ten times the level number; level 1b (level_idc 11 with
    /// constraint_set3_flag in the Baseline, Main and Extended profiles, or level_idc 9) sorts
    /// between 1 and 1.1.
    var levelRank: Int {
        if levelIDC == 9 { return 105 }
        if levelIDC == 11, flag(3), [0x42, 0x4D, 0x58].contains(profileIDC) { return 105 }
        return Int(levelIDC) * 10
    }

    /// Whether a decoder offered with this profile-level-id can take a stream described by
    /// `stream`: the stream's profile is the offered one or a subset of it, and its level is not
    /// above the offered level.
    ///
    /// The subset rule follows the decoder conformance clauses of H.264 Annex A: a Baseline
    /// decoder decodes every bitstream with constraint_set0_flag (A.2.1), a Main or High decoder
    /// every bitstream with constraint_set1_flag (A.2.2, A.2.4), and Constrained Baseline
    /// streams carry both flags. So a Constrained Baseline stream (our 42e01f; x264 writes 42c01f)
    /// satisfies a `42001f` (Baseline) offer, which Chromium lists before `42e01f`, and a Main or
    /// High offer; a Baseline stream (it may use FMO or ASO) does not satisfy Constrained Baseline.
    /// libwebrtc itself matches profiles by name only; the wider rule loses nothing, since every
    /// accepted pair is one the offered decoder must handle.
    ///
    /// The level must not exceed the offered one whether or not `level-asymmetry-allowed` is
    /// set: with it the offered level is the most the offerer receives, without it the answer's
    /// level (at most the offered one) binds both directions (RFC 6184 §8.2.2).
    public func accepts(_ stream: H264ProfileLevelID) -> Bool {
        guard stream.levelRank <= levelRank else { return false }
        switch (profile, stream.profile) {
        case (.other, _), (_, .other):
            return profileIDC == stream.profileIDC && constraints == stream.constraints
        case (let offered, let sent) where offered == sent:
            return true
        case (.baseline, .constrainedBaseline), (.main, .constrainedBaseline), (.high, .constrainedBaseline),
            (.constrainedHigh, .constrainedBaseline), (.high, .main), (.high, .constrainedHigh):
            return true
        default:
            return false
        }
    }

    /// What to offer for a stream described by `self` (our WHIP offer): a Constrained Baseline
    /// stream at level 3.1 or below as `42e01f`, the profile-level-id every WebRTC stack writes
    /// (x264 writes `42c0…`, and Janus' VideoRoom compares the text when a publisher renegotiates
    /// for an ICE restart); any other stream as it is. The level is an upper bound (RFC 6184
    /// §8.1): a 3.0 stream conforms to a 3.1 signal.
    public var offered: H264ProfileLevelID {
        guard profile == .constrainedBaseline, levelRank <= Self.constrainedBaseline31.levelRank else { return self }
        return Self.constrainedBaseline31
    }

    /// The profile-level-id to answer for a payload type offered as `self` when sending
    /// `stream`: the offered profile bytes (RFC 6184 §8.2.2: the profile is symmetric, only the
    /// level may differ) with the stream's level, which `accepts` has checked is not higher.
    public func answer(sending stream: H264ProfileLevelID) -> H264ProfileLevelID {
        H264ProfileLevelID(profileIDC: profileIDC, constraints: constraints, levelIDC: stream.levelIDC)
    }
}
