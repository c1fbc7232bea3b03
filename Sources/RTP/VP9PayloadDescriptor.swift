/// The VP9 payload descriptor at the start of every VP9 RTP payload, RFC 9628 §4.2.
///
/// Flexible mode (F=1):
/// ```
///         0 1 2 3 4 5 6 7
///        +-+-+-+-+-+-+-+-+
///        |I|P|L|F|B|E|V|Z| (REQUIRED)
///        +-+-+-+-+-+-+-+-+
///   I:   |M| PICTURE ID  | (REQUIRED)
///        +-+-+-+-+-+-+-+-+
///   M:   | EXTENDED PID  | (RECOMMENDED)
///        +-+-+-+-+-+-+-+-+
///   L:   | TID |U| SID |D| (CONDITIONALLY RECOMMENDED)
///        +-+-+-+-+-+-+-+-+                             -\
///   P,F: | P_DIFF      |N| (CONDITIONALLY REQUIRED)    - up to 3 times
///        +-+-+-+-+-+-+-+-+                             -/
///   V:   | SS            |
///        | ..            |
///        +-+-+-+-+-+-+-+-+
/// ```
/// Non-flexible mode (F=0): the same, except that with L=1 a TL0PICIDX octet follows the layer
/// indices, and there are no P_DIFF octets:
/// ```
///   L:   | TID |U| SID |D| (CONDITIONALLY RECOMMENDED)
///        +-+-+-+-+-+-+-+-+
///        |   TL0PICIDX   | (CONDITIONALLY REQUIRED)
///        +-+-+-+-+-+-+-+-+
/// ```
/// I: PictureID present (M: 15 bits rather than 7). P: inter-picture predicted. L: layer indices
/// present. F: flexible mode. B: start of a (layer) frame. E: end of a (layer) frame. V:
/// scalability structure present. Z: not a reference for upper spatial layers. In the layer
/// indices, U is the switching-up point and D the inter-layer dependency.
///
/// The scalability structure (SS), §4.2.1:
/// ```
///        +-+-+-+-+-+-+-+-+
///   V:   | N_S |Y|G|-|-|-|
///        +-+-+-+-+-+-+-+-+              -\
///   Y:   |     WIDTH     | (OPTIONAL)    .
///        +               +               .
///        |               | (OPTIONAL)    .
///        +-+-+-+-+-+-+-+-+               . - N_S + 1 times
///        |     HEIGHT    | (OPTIONAL)    .
///        +               +               .
///        |               | (OPTIONAL)    .
///        +-+-+-+-+-+-+-+-+              -/
///   G:   |      N_G      | (OPTIONAL)
///        +-+-+-+-+-+-+-+-+                            -\
///   N_G: | TID |U| R |-|-| (OPTIONAL)                 .
///        +-+-+-+-+-+-+-+-+              -\            . - N_G times
///        |    P_DIFF     | (OPTIONAL)    . - R times  .
///        +-+-+-+-+-+-+-+-+              -/            -/
/// ```
/// N_S: spatial layers minus one. Y: each layer's WIDTH and HEIGHT (16 bits each) follow. G: a
/// picture group description follows (N_G entries, each with its R reference P_DIFFs).
public struct VP9PayloadDescriptor: Sendable, Hashable {
    /// L: the layer indices (and, in non-flexible mode, TL0PICIDX).
    public struct LayerIndices: Sendable, Hashable {
        /// TID (0...7).
        public var temporalID: UInt8
        /// U: switching-up point.
        public var switchingUpPoint: Bool
        /// SID (0...7).
        public var spatialID: UInt8
        /// D: inter-layer dependency (the frame depends on the spatial layer below).
        public var interLayerDependency: Bool
        /// TL0PICIDX: present in non-flexible mode only.
        public var tl0PictureIndex: UInt8?

        public init(
            temporalID: UInt8 = 0,
            switchingUpPoint: Bool = false,
            spatialID: UInt8 = 0,
            interLayerDependency: Bool = false,
            tl0PictureIndex: UInt8? = nil
        ) {
            self.temporalID = temporalID & 0x07
            self.switchingUpPoint = switchingUpPoint
            self.spatialID = spatialID & 0x07
            self.interLayerDependency = interLayerDependency
            self.tl0PictureIndex = tl0PictureIndex
        }
    }

    /// §4.2.1's SS.
    public struct ScalabilityStructure: Sendable, Hashable {
        public struct Resolution: Sendable, Hashable {
            public var width: UInt16
            public var height: UInt16
            public init(width: UInt16, height: UInt16) {
                self.width = width
                self.height = height
            }
        }

        /// One picture of the picture group (G).
        public struct PictureGroupEntry: Sendable, Hashable {
            public var temporalID: UInt8
            public var switchingUpPoint: Bool
            /// The R P_DIFFs (0...3 of them).
            public var referenceIndices: [UInt8]
            public init(temporalID: UInt8, switchingUpPoint: Bool, referenceIndices: [UInt8]) {
                self.temporalID = temporalID & 0x07
                self.switchingUpPoint = switchingUpPoint
                self.referenceIndices = referenceIndices
            }
        }

        /// N_S + 1 (1...8).
        public var spatialLayers: Int
        /// Y: one resolution per spatial layer, or nil.
        public var resolutions: [Resolution]?
        /// G: the picture group, or nil.
        public var pictureGroup: [PictureGroupEntry]?

        public init(spatialLayers: Int = 1, resolutions: [Resolution]? = nil, pictureGroup: [PictureGroupEntry]? = nil)
        {
            self.spatialLayers = spatialLayers
            self.resolutions = resolutions
            self.pictureGroup = pictureGroup
        }

        var length: Int {
            1 + (resolutions == nil ? 0 : 4 * spatialLayers)
                + (pictureGroup.map { 1 + $0.reduce(0) { $0 + 1 + $1.referenceIndices.count } } ?? 0)
        }
    }

    /// I (and M).
    public var pictureID: VPXPictureID?
    /// P: the frame uses inter-picture prediction. 0 on key frames.
    public var interPicturePredicted: Bool
    /// F: flexible mode.
    public var flexibleMode: Bool
    /// B: the payload starts a (layer) frame.
    public var startOfFrame: Bool
    /// E: the payload ends a (layer) frame.
    public var endOfFrame: Bool
    /// Z: not a reference for upper spatial layers.
    public var notReferenceForUpperSpatialLayers: Bool
    /// L.
    public var layerIndices: LayerIndices?
    /// P_DIFFs (flexible mode with P=1): 1...3 of them.
    public var referenceIndices: [UInt8]
    /// V: the scalability structure.
    public var scalabilityStructure: ScalabilityStructure?

    public init(
        pictureID: VPXPictureID? = nil,
        interPicturePredicted: Bool,
        flexibleMode: Bool = false,
        startOfFrame: Bool,
        endOfFrame: Bool,
        notReferenceForUpperSpatialLayers: Bool = false,
        layerIndices: LayerIndices? = nil,
        referenceIndices: [UInt8] = [],
        scalabilityStructure: ScalabilityStructure? = nil
    ) {
        self.pictureID = pictureID
        self.interPicturePredicted = interPicturePredicted
        self.flexibleMode = flexibleMode
        self.startOfFrame = startOfFrame
        self.endOfFrame = endOfFrame
        self.notReferenceForUpperSpatialLayers = notReferenceForUpperSpatialLayers
        self.layerIndices = layerIndices
        self.referenceIndices = referenceIndices
        self.scalabilityStructure = scalabilityStructure
    }

    /// At most three P_DIFFs per frame (§4.2: "up to 3 times"; R is a 2-bit count).
    public static let maximumReferenceIndices = 3

    /// The descriptor says the frame is a key frame's: P=0 (no inter-picture prediction) and
    /// no dependency on a lower spatial layer (D=0, or no layer indices), as libwebrtc decides.
    public var isKeyFrame: Bool { !interPicturePredicted && !(layerIndices?.interLayerDependency ?? false) }

    /// Bytes the descriptor takes.
    public var length: Int {
        1 + (pictureID?.length ?? 0) + (layerIndices == nil ? 0 : flexibleMode ? 1 : 2)
            + (flexibleMode && interPicturePredicted ? referenceIndices.count : 0) + (scalabilityStructure?.length ?? 0)
    }

    /// The descriptor's bytes (allocates; the payloader writes its own in place). Fields the
    /// flags do not allow (P_DIFFs without F and P, TL0PICIDX in flexible mode) are left out;
    /// at most three P_DIFFs and eight spatial layers are written.
    public var bytes: [UInt8] {
        var copy = self
        if !(flexibleMode && interPicturePredicted) { copy.referenceIndices = [] }
        copy.referenceIndices = Array(copy.referenceIndices.prefix(Self.maximumReferenceIndices))
        if flexibleMode { copy.layerIndices?.tl0PictureIndex = nil }
        if var structure = copy.scalabilityStructure {
            structure.spatialLayers = min(8, max(1, structure.spatialLayers))
            if let resolutions = structure.resolutions {
                structure.resolutions = (0..<structure.spatialLayers).map {
                    $0 < resolutions.count ? resolutions[$0] : Resolution(width: 0, height: 0)
                }
            }
            structure.pictureGroup = structure.pictureGroup.map {
                Array(
                    $0.prefix(255).map {
                        var entry = $0
                        entry.referenceIndices = Array(entry.referenceIndices.prefix(Self.maximumReferenceIndices))
                        return entry
                    }
                )
            }
            copy.scalabilityStructure = structure
        }
        var result = [UInt8](repeating: 0, count: copy.length)
        result.withUnsafeMutableBytes { raw in
            var writer = ByteWriter(raw)
            copy.write(to: &writer)
        }
        return result
    }

    public typealias Resolution = ScalabilityStructure.Resolution

    private func write(to writer: inout ByteWriter) {
        var first: UInt8 = 0
        if pictureID != nil { first |= 0x80 }
        if interPicturePredicted { first |= 0x40 }
        if layerIndices != nil { first |= 0x20 }
        if flexibleMode { first |= 0x10 }
        if startOfFrame { first |= 0x08 }
        if endOfFrame { first |= 0x04 }
        if scalabilityStructure != nil { first |= 0x02 }
        if notReferenceForUpperSpatialLayers { first |= 0x01 }
        writer.write(first)
        pictureID?.write(to: &writer)
        if let layer = layerIndices {
            var octet = layer.temporalID << 5 | layer.spatialID << 1
            if layer.switchingUpPoint { octet |= 0x10 }
            if layer.interLayerDependency { octet |= 0x01 }
            writer.write(octet)
            if !flexibleMode { writer.write(layer.tl0PictureIndex ?? 0) }
        }
        if flexibleMode && interPicturePredicted {
            for (index, diff) in referenceIndices.enumerated() {
                writer.write(diff << 1 | (index < referenceIndices.count - 1 ? 1 : 0))
            }
        }
        if let structure = scalabilityStructure {
            var header = UInt8(structure.spatialLayers - 1) << 5
            if structure.resolutions != nil { header |= 0x10 }
            if structure.pictureGroup != nil { header |= 0x08 }
            writer.write(header)
            for resolution in structure.resolutions ?? [] {
                writer.write(resolution.width)
                writer.write(resolution.height)
            }
            if let group = structure.pictureGroup {
                writer.write(UInt8(group.count))
                for entry in group {
                    var octet = entry.temporalID << 5 | UInt8(entry.referenceIndices.count) << 2
                    if entry.switchingUpPoint { octet |= 0x10 }
                    writer.write(octet)
                    for diff in entry.referenceIndices { writer.write(diff) }
                }
            }
        }
    }

    /// Reads the descriptor at the start of `payload` and returns it with its length. Every
    /// field a flag announces must be there: a short payload throws `.truncated` naming the field
    /// and its offset; a fourth P_DIFF, or no VP9 data after the descriptor, throws
    /// `.invalidVP9Payload`.
    public static func parse(
        _ payload: ArraySlice<UInt8>
    ) throws(RTPError) -> (
        descriptor: VP9PayloadDescriptor, length: Int
    ) {
        let result: Result<(VP9PayloadDescriptor, Int), RTPError> = payload.withUnsafeBytes { raw in
            do throws(RTPError) { return .success(try parse(raw)) } catch { return .failure(error) }
        }
        let (descriptor, length) = try result.get()
        return (descriptor, length)
    }

    static func parse(_ raw: UnsafeRawBufferPointer) throws(RTPError) -> (VP9PayloadDescriptor, Int) {
        var reader = ByteReader(raw, context: "VP9 payload descriptor")
        let first = try reader.readUInt8("first octet (I P L F B E V Z)")
        let flexible = first & 0x10 != 0
        let predicted = first & 0x40 != 0
        var descriptor = VP9PayloadDescriptor(
            interPicturePredicted: predicted,
            flexibleMode: flexible,
            startOfFrame: first & 0x08 != 0,
            endOfFrame: first & 0x04 != 0,
            notReferenceForUpperSpatialLayers: first & 0x01 != 0
        )
        if first & 0x80 != 0 {
            descriptor.pictureID = try VPXPictureID.read(&reader)
        }
        if first & 0x20 != 0 {
            let layer = try reader.readUInt8("layer indices (TID U SID D), announced by L=1")
            var indices = LayerIndices(
                temporalID: layer >> 5,
                switchingUpPoint: layer & 0x10 != 0,
                spatialID: layer >> 1 & 0x07,
                interLayerDependency: layer & 0x01 != 0
            )
            if !flexible {
                indices.tl0PictureIndex = try reader.readUInt8("TL0PICIDX, announced by L=1 with F=0")
            }
            descriptor.layerIndices = indices
        }
        if flexible && predicted {
            var more = true
            while more {
                guard descriptor.referenceIndices.count < maximumReferenceIndices else {
                    throw RTPError(
                        .invalidVP9Payload,
                        "VP9 payload descriptor: P_DIFF at offset \(reader.offset - 1) announces a fourth reference "
                            + "index (N=1); at most \(maximumReferenceIndices) are allowed"
                    )
                }
                let diff = try reader.readUInt8("P_DIFF, announced by F=1 and P=1")
                descriptor.referenceIndices.append(diff >> 1)
                more = diff & 0x01 != 0
            }
        }
        if first & 0x02 != 0 {
            descriptor.scalabilityStructure = try readScalabilityStructure(&reader)
        }
        guard reader.remaining > 0 else {
            throw RTPError(
                .invalidVP9Payload,
                "VP9 payload: no VP9 data after the \(reader.offset)-byte payload descriptor"
            )
        }
        return (descriptor, reader.offset)
    }

    private static func readScalabilityStructure(_ reader: inout ByteReader) throws(RTPError) -> ScalabilityStructure {
        let header = try reader.readUInt8("SS header (N_S Y G), announced by V=1")
        var structure = ScalabilityStructure(spatialLayers: Int(header >> 5) + 1)
        if header & 0x10 != 0 {
            // Checked as a whole first: a structure announcing more layers than the packet holds
            // is refused before anything is allocated for it.
            try reader.need(
                4 * structure.spatialLayers,
                for: "SS WIDTH and HEIGHT of N_S + 1 = \(structure.spatialLayers) spatial layers (Y=1)"
            )
            var resolutions: [Resolution] = []
            resolutions.reserveCapacity(structure.spatialLayers)
            for layer in 0..<structure.spatialLayers {
                let width = try reader.readUInt16("SS WIDTH of spatial layer \(layer)")
                let height = try reader.readUInt16("SS HEIGHT of spatial layer \(layer)")
                resolutions.append(Resolution(width: width, height: height))
            }
            structure.resolutions = resolutions
        }
        if header & 0x08 != 0 {
            let count = Int(try reader.readUInt8("SS N_G, announced by G=1"))
            try reader.need(count, for: "SS picture group of \(count) entries (N_G)")
            var group: [ScalabilityStructure.PictureGroupEntry] = []
            group.reserveCapacity(count)
            for index in 0..<count {
                let entry = try reader.readUInt8("SS picture group entry \(index) (TID U R)")
                let referenceCount = Int(entry >> 2 & 0x03)
                var diffs: [UInt8] = []
                for reference in 0..<referenceCount {
                    diffs.append(try reader.readUInt8("SS P_DIFF \(reference) of picture group entry \(index)"))
                }
                group.append(
                    .init(temporalID: entry >> 5, switchingUpPoint: entry & 0x10 != 0, referenceIndices: diffs)
                )
            }
            structure.pictureGroup = group
        }
        return structure
    }
}
