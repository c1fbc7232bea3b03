extension IngestParser {
    func hello(_ header: IngestHeader, _ bytes: MessageBytes) throws(IngestError) -> IngestHello {
        let b = Self.body
        // The version is read before anything else: a hello of another version may be laid out
        // differently after it, and the answer must still be "version mismatch".
        let version: UInt16 = try bytes.integer(b, "hello.version")
        guard supportedVersions.contains(version) else {
            let ours =
                supportedVersions.count == 1
                ? "\(supportedVersions.lowerBound)"
                : "\(supportedVersions.lowerBound)…\(supportedVersions.upperBound)"
            throw .field(
                .versionMismatch,
                "hello.version",
                at: b,
                "the peer speaks protocol version \(version); this side speaks \(ours)"
            )
        }
        guard header.payloadLength >= IngestHello.fixedSize else {
            throw .field(
                .impossibleLength,
                "length",
                at: 8,
                "\(header.payloadLength) bytes cannot hold a version \(version) hello, which needs at least "
                    + "\(IngestHello.fixedSize)"
            )
        }
        let role = IngestRole(rawValue: try bytes.integer(b + 2, "hello.role"))
        guard role == .capture || role == .host else {
            throw .field(.invalidField, "hello.role", at: b + 2, "\(role) is not 1 (capture) or 2 (host)")
        }
        let nameLength = Int(try bytes.integer(b + 3, "hello.nameLength", as: UInt8.self))
        guard nameLength <= IngestHello.maxNameBytes else {
            throw .field(
                .invalidField,
                "hello.nameLength",
                at: b + 3,
                "\(nameLength) bytes is over the \(IngestHello.maxNameBytes)-byte limit"
            )
        }
        let capabilities = IngestCapabilities(rawValue: try bytes.integer(b + 4, "hello.capabilities"))
        let expected = IngestHello.fixedSize + nameLength
        guard header.payloadLength == expected else {
            throw .field(
                .lengthMismatch,
                "length",
                at: 8,
                "a payload of \(header.payloadLength) bytes disagrees with the \(expected) bytes of a hello with a "
                    + "\(nameLength)-byte name"
            )
        }
        let name = try bytes.text(b + IngestHello.fixedSize, count: nameLength, "hello.name")
        return IngestHello(version: version, role: role, capabilities: capabilities, name: name)
    }

    func control(_ header: IngestHeader, _ bytes: MessageBytes) throws(IngestError) -> IngestControl {
        let b = Self.body
        let command: UInt8 = try bytes.integer(b, "control.command")
        let reserved: UInt8 = try bytes.integer(b + 1, "control.reserved")
        guard reserved == 0 else {
            throw .field(.invalidField, "control.reserved", at: b + 1, "must be 0, got \(reserved)")
        }
        let reason: UInt16 = try bytes.integer(b + 2, "control.reason")
        let textLength = Int(try bytes.integer(b + 4, "control.textLength", as: UInt16.self))
        guard textLength <= IngestControl.maxTextBytes else {
            throw .field(
                .invalidField,
                "control.textLength",
                at: b + 4,
                "\(textLength) bytes is over the \(IngestControl.maxTextBytes)-byte limit"
            )
        }
        let expected = IngestControl.fixedSize + textLength
        guard header.payloadLength == expected else {
            throw .field(
                .lengthMismatch,
                "length",
                at: 8,
                "a payload of \(header.payloadLength) bytes disagrees with the \(expected) bytes of a control "
                    + "message with a \(textLength)-byte text"
            )
        }
        switch command {
        case IngestControl.pauseCommand, IngestControl.resumeCommand:
            guard reason == 0, textLength == 0 else {
                throw .field(
                    .invalidField,
                    "control.reason",
                    at: b + 2,
                    "pause and resume carry no reason or text, got reason \(reason) and \(textLength) bytes of text"
                )
            }
            return command == IngestControl.pauseCommand ? .pause : .resume
        case IngestControl.endCommand:
            guard reason != 0 else {
                throw .field(.invalidField, "control.reason", at: b + 2, "an end needs a reason; 0 is none")
            }
            let text = try bytes.text(b + IngestControl.fixedSize, count: textLength, "control.text")
            return .end(IngestEndReason(rawValue: reason), text)
        default:
            throw .field(
                .invalidField,
                "control.command",
                at: b,
                "\(command) is not 1 (pause), 2 (resume) or 3 (end)"
            )
        }
    }
}
