import RTP

/// libFuzzer entry for the VP8 (RFC 7741) and VP9 (RFC 9628) depacketizers, three jobs per input:
///
/// 1. Every length-prefixed chunk (each different one once) as a VP8 and as a VP9 payload
///    descriptor: parsing never crashes; what parses has the length it reports, writes back to
///    bytes that parse to the same descriptor, and agrees with the key-frame helpers.
/// 2. The chunks as a packet stream (sequence-number step, timestamp step and marker from the
///    prefix byte) into both depacketizers with small limits: nothing crashes, every frame keeps
///    the limit, at no point do the frames handed out hold more bytes than the payloads fed so
///    far (so never more than the input), and a complete VP8 frame's key flag is its P bit.
/// 3. Frames built from the bytes sent through both payloaders' hot paths and back, one packet
///    of one frame dropped when the first byte says so: every packet fits the MTU, carries the
///    frame's timestamp, the marker on the last packet only and one PictureID per frame; every
///    frame comes back byte for byte, except the one with the dropped packet, which comes back
///    incomplete.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzVPXDepacketizer(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = [UInt8](UnsafeRawBufferPointer(start: data, count: size))
    let chunks = lengthPrefixedChunks(input)
    // The descriptor checks are a function of the chunk's bytes alone (static parsers, no state),
    // so a chunk seen before in this input proves nothing new. Grown inputs repeat chunks a lot
    // (of 65,152 chunks in a grown corpus of 752 files, 11,863 were new to their input and
    // 32,686 empty), and each refused parse formats an error message.
    var checked = Set<ArraySlice<UInt8>>()
    for (_, chunk) in chunks where checked.insert(chunk).inserted {
        checkDescriptors(chunk)
    }
    feedGarbage(chunks, total: input.count)
    roundTrip(input)
    return 0
}

private func lengthPrefixedChunks(_ input: [UInt8]) -> [(control: UInt8, bytes: ArraySlice<UInt8>)] {
    var chunks: [(UInt8, ArraySlice<UInt8>)] = []
    var index = 0
    while index < input.count {
        let control = input[index]
        let length = min(Int(control & 0x3F), input.count - index - 1)
        chunks.append((control, input[(index + 1)..<(index + 1 + length)]))
        index += 1 + length
    }
    return chunks
}

private func checkDescriptors(_ chunk: ArraySlice<UInt8>) {
    if let (descriptor, length) = try? VP8PayloadDescriptor.parse(chunk) {
        guard length == descriptor.length, length < chunk.count else {
            fatalError("VP8 descriptor length \(length) vs \(descriptor.length), chunk \(chunk.count)")
        }
        let written = descriptor.bytes
        guard written.count == length, let again = try? VP8PayloadDescriptor.parse((written + [0])[...]),
            again.descriptor == descriptor
        else {
            fatalError("VP8 descriptor does not write back: \(descriptor)")
        }
        let key = descriptor.startsFrame && chunk[chunk.startIndex + length] & 1 == 0
        guard VP8Depacketizer.startsKeyFrame(chunk) == key else { fatalError("VP8 key-frame helper disagrees") }
    } else if VP8Depacketizer.startsKeyFrame(chunk) {
        fatalError("VP8 key frame found in a payload that does not parse")
    }
    if let (descriptor, length) = try? VP9PayloadDescriptor.parse(chunk) {
        guard length == descriptor.length, length < chunk.count else {
            fatalError("VP9 descriptor length \(length) vs \(descriptor.length), chunk \(chunk.count)")
        }
        let written = descriptor.bytes
        guard written.count == length, let again = try? VP9PayloadDescriptor.parse((written + [0])[...]),
            again.descriptor == descriptor
        else {
            fatalError("VP9 descriptor does not write back: \(descriptor)")
        }
        guard VP9Depacketizer.startsKeyFrame(chunk) == (descriptor.startOfFrame && descriptor.isKeyFrame) else {
            fatalError("VP9 key-frame helper disagrees")
        }
    } else if VP9Depacketizer.startsKeyFrame(chunk) {
        fatalError("VP9 key frame found in a payload that does not parse")
    }
}

private func feedGarbage(_ chunks: [(control: UInt8, bytes: ArraySlice<UInt8>)], total: Int) {
    let limit = 512
    var vp8 = VP8Depacketizer(limits: .init(maximumFrameLength: limit))
    var vp9 = VP9Depacketizer(limits: .init(maximumFrameLength: limit))
    var sequence: UInt16 = 0xFFF0
    var timestamp: UInt32 = 0
    // Payload bytes fed so far, and frame bytes handed out so far: frames are made of what was
    // fed, so the second never passes the first.
    var fed = 0
    var out8 = 0
    var out9 = 0
    for (control, bytes) in chunks {
        // Bits 6 and 7: the marker, and a sequence number that jumps (a loss, or going back).
        let marker = control & 0x40 != 0
        sequence &+= control & 0x80 != 0 ? UInt16(bytes.first ?? 0) &- 8 : 1
        if bytes.count > 1, bytes[bytes.startIndex + 1] & 0x07 == 0 { timestamp &+= 3000 }
        fed += bytes.count
        let frames8 =
            (try? vp8.push(payload: bytes, sequenceNumber: sequence, timestamp: timestamp, marker: marker)) ?? []
        for frame in frames8 {
            guard frame.data.count <= limit else { fatalError("VP8 frame of \(frame.data.count) bytes") }
            if frame.isComplete, frame.isKeyFrame != (frame.data.first.map { $0 & 1 == 0 } ?? false) {
                fatalError("complete VP8 frame whose key flag is not its P bit")
            }
            out8 += frame.data.count
        }
        let frames9 =
            (try? vp9.push(payload: bytes, sequenceNumber: sequence, timestamp: timestamp, marker: marker)) ?? []
        for frame in frames9 {
            guard frame.data.count <= limit else { fatalError("VP9 frame of \(frame.data.count) bytes") }
            out9 += frame.data.count
        }
        guard out8 <= fed, out9 <= fed else { fatalError("frames hold \(out8) and \(out9) bytes of \(fed) fed") }
    }
    out8 += vp8.flush()?.data.count ?? 0
    out9 += vp9.flush()?.data.count ?? 0
    guard out8 <= fed, out9 <= fed, fed <= total else { fatalError("frames hold more bytes than the input") }
}

private func roundTrip(_ input: [UInt8]) {
    guard input.count >= 4 else { return }
    let mtu = 128 + Int(input[0]) * 4
    let trailer = [0, 4, 10, 16][Int(input[1] & 3)]
    let csrcCount = Int(input[1] >> 2 & 3)
    let dropFrame = input[1] & 0x10 != 0 ? Int(input[2] % 4) : nil
    let dropPacket = Int(input[3])
    var frames: [(bytes: [UInt8], key: Bool, width: Int, height: Int)] = []
    var index = 4
    while index + 3 <= input.count, frames.count < 4 {
        let wanted = (Int(input[index]) << 8 | Int(input[index + 1])) % 6000 + 1
        let flags = input[index + 2]
        let length = min(wanted, input.count - index - 3)
        guard length > 0 else { break }
        let bytes = Array(input[(index + 3)..<(index + 3 + length)])
        frames.append((bytes, flags & 1 == 1, 1 + Int(flags) * 250, 1 + Int(wanted)))
        index += 3 + length
    }
    guard !frames.isEmpty else { return }
    let budget: RTPPayloadBudget
    var streams: [RTPStreamState]
    do {
        budget = try RTPPayloadBudget(mtu: mtu, srtpTrailerRoom: trailer)
        streams = try (0..<2).map { codec in
            try RTPStreamState(
                ssrc: 0x5EED + UInt32(codec),
                payloadType: 96 + UInt8(codec),
                clockRate: 90_000,
                initialSequenceNumber: 65_532,
                timestampBase: 0,
                csrcs: Array(repeating: 7, count: csrcCount)
            )
        }
    } catch {
        fatalError("valid configuration refused: \(error)")
    }
    let buffer = RTPPacketBuffer(budget: budget)
    var vp8 = VP8Payloader(budget: budget, firstPictureID: UInt16(input[2]) << 8 | 0x7F00)
    var vp9 = VP9Payloader(budget: budget, firstPictureID: UInt16(input[3]) << 7)
    var vp8Receiver = VP8Depacketizer()
    var vp9Receiver = VP9Depacketizer()
    var received: [[(pictureID: UInt16?, data: [UInt8], complete: Bool, key: Bool, resolution: (Int, Int)?)]] = [
        [], [],
    ]
    /// Per codec, what must come back: each frame's PictureID and whether it comes whole (nil:
    /// its only packet was dropped, so nothing comes back).
    var expected: [[(pictureID: UInt16, whole: Bool)?]] = [[], []]
    for (number, frame) in frames.enumerated() {
        let timestamp = UInt32(number) &* 3000 &+ 0xFFFF_F000
        for codec in 0..<2 {
            var packets: [RTPPacket] = []
            let pictureID = codec == 0 ? vp8.nextPictureID : vp9.nextPictureID
            do {
                let emit: (RTPPacketBuffer) throws -> Void = { buffer in
                    guard buffer.count <= budget.maximumPacketLength else {
                        fatalError("packet of \(buffer.count) bytes breaks \(budget)")
                    }
                    packets.append(try RTPPacket.parse(buffer.copyBytes()))
                }
                if codec == 0 {
                    try vp8.packetize(
                        frame: frame.bytes[...],
                        timestamp: timestamp,
                        stream: &streams[0],
                        into: buffer,
                        emit: emit
                    )
                } else {
                    let info = VP9Payloader.FrameInfo(isKeyFrame: frame.key, width: frame.width, height: frame.height)
                    try vp9.packetize(
                        frame: frame.bytes[...],
                        info: info,
                        timestamp: timestamp,
                        stream: &streams[1],
                        into: buffer,
                        emit: emit
                    )
                }
            } catch {
                fatalError("packetizing failed: \(error)")
            }
            guard packets.allSatisfy({ $0.header.timestamp == timestamp && $0.header.csrcs.count == csrcCount }),
                packets.dropLast().allSatisfy({ !$0.header.marker }), packets.last?.header.marker == true
            else {
                fatalError("timestamp, CSRCs or marker wrong: \(packets.map(\.header))")
            }
            let dropped = number == dropFrame ? dropPacket % packets.count : nil
            expected[codec].append(dropped != nil && packets.count == 1 ? nil : (pictureID, dropped == nil))
            do {
                for (position, packet) in packets.enumerated() where position != dropped {
                    if codec == 0 {
                        for got in try vp8Receiver.push(packet) {
                            received[0].append((got.pictureID, got.data, got.isComplete, got.isKeyFrame, nil))
                        }
                    } else {
                        for got in try vp9Receiver.push(packet) {
                            let size = got.resolution.map { (Int($0.width), Int($0.height)) }
                            received[1].append((got.pictureID, got.data, got.isComplete, got.isKeyFrame, size))
                        }
                    }
                }
            } catch {
                fatalError("depacketizing our own packets failed: \(error)")
            }
        }
    }
    // A lost last packet leaves the last frame open until a flush shows it is over.
    if let rest = vp8Receiver.flush() {
        received[0].append((rest.pictureID, rest.data, rest.isComplete, rest.isKeyFrame, nil))
    }
    if let rest = vp9Receiver.flush() {
        received[1].append(
            (
                rest.pictureID, rest.data, rest.isComplete, rest.isKeyFrame,
                rest.resolution.map { (Int($0.width), Int($0.height)) }
            )
        )
    }
    for codec in 0..<2 {
        let sent = frames.indices.compactMap { number in expected[codec][number].map { (number, $0) } }
        guard received[codec].count == sent.count else {
            fatalError("codec \(codec): \(sent.count) frames expected back, \(received[codec].count) came")
        }
        for ((number, want), got) in zip(sent, received[codec]) {
            guard got.pictureID == want.pictureID, got.complete == want.whole else {
                fatalError(
                    "codec \(codec) frame \(number): PictureID \(String(describing: got.pictureID)) complete \(got.complete)"
                )
            }
            guard want.whole else { continue }
            let frame = frames[number]
            guard got.data == frame.bytes else { fatalError("codec \(codec) frame \(number) changed") }
            if codec == 1 {
                guard got.key == frame.key else { fatalError("VP9 frame \(number): key flag lost") }
                if frame.key, got.resolution?.0 != frame.width || got.resolution?.1 != frame.height {
                    fatalError("VP9 key frame \(number) without its resolution")
                }
            }
        }
    }
}
