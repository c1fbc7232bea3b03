#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Writes a `SessionDescription` as RFC 8866 text with CRLF line ends.
///
/// Every field is checked first (`SDPDescriptionValidator`): a value the parser could not read back
/// unchanged (a line break in a name, a space inside a token, a typed attribute smuggled in as a
/// generic one) is an error, never silently written.
public enum SDPWriter {
    public static func write(_ description: SessionDescription) throws -> String {
        try SDPDescriptionValidator.validate(description)
        var lines: [String] = []
        let origin = description.origin
        lines.append("v=0")
        lines.append(
            "o=\(origin.username) \(origin.sessionID) \(origin.sessionVersion) IN "
                + "\(origin.addressFamily.rawValue) \(origin.unicastAddress)"
        )
        lines.append("s=\(description.sessionName)")
        if let connection = description.connection { lines.append("c=\(connection)") }
        lines.append("t=\(description.timing.start) \(description.timing.stop)")
        if let direction = description.direction { lines.append("a=\(direction.rawValue)") }
        lines.append(contentsOf: description.attributes.map(line(for:)))
        for media in description.media {
            appendMedia(media, to: &lines)
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// RFC 8866 §5 order inside a media section: `m=`, `c=`, then attributes.
    private static func appendMedia(_ media: MediaDescription, to lines: inout [String]) {
        let port = media.portCount.map { "\(media.port)/\($0)" } ?? "\(media.port)"
        let formats =
            media.transport.carriesRTP ? media.formats.map { String($0.payloadType) } : media.otherFormats
        lines.append("m=\(media.kind.rawValue) \(port) \(media.transport.rawValue) \(formats.joined(separator: " "))")
        if let connection = media.connection { lines.append("c=\(connection)") }
        for format in media.formats {
            if let map = format.rtpmap {
                let channels = map.channels.map { "/\($0)" } ?? ""
                lines.append("a=rtpmap:\(format.payloadType) \(map.encodingName)/\(map.clockRate)\(channels)")
            }
            if !format.parameters.isEmpty {
                let items = format.parameters.map { item in item.value.map { "\(item.name)=\($0)" } ?? item.name }
                lines.append("a=fmtp:\(format.payloadType) \(items.joined(separator: ";"))")
            }
        }
        for feedback in media.rtcpFeedback {
            let payloadType = feedback.payloadType.map { String($0) } ?? "*"
            lines.append("a=rtcp-fb:\(payloadType) \(feedback.type)" + (feedback.parameter.map { " \($0)" } ?? ""))
        }
        if let mid = media.mid { lines.append("a=mid:\(mid)") }
        if let direction = media.direction { lines.append("a=\(direction.rawValue)") }
        if let rtcp = media.rtcp {
            lines.append("a=rtcp:\(rtcp.port)" + (rtcp.address.map { " \($0)" } ?? ""))
        }
        if media.rtcpMux { lines.append("a=rtcp-mux") }
        for crypto in media.crypto {
            lines.append("a=crypto:\(crypto.tag) \(crypto.suite) \(keyParameters(crypto.keys))")
            if !crypto.sessionParameters.isEmpty {
                lines[lines.count - 1] += " " + crypto.sessionParameters.joined(separator: " ")
            }
        }
        for group in media.ssrcGroups {
            lines.append("a=ssrc-group:\(group.semantics) " + group.ssrcs.map { String($0) }.joined(separator: " "))
        }
        for ssrc in media.ssrcAttributes {
            lines.append("a=ssrc:\(ssrc.ssrc) \(ssrc.name)" + (ssrc.value.map { ":\($0)" } ?? ""))
        }
        lines.append(contentsOf: media.rids.map { "a=rid:\($0.attributeValue)" })
        if let simulcast = media.simulcast { lines.append("a=simulcast:\(simulcast.attributeValue)") }
        lines.append(contentsOf: media.attributes.map(line(for:)))
    }

    private static func keyParameters(_ keys: [SDPCryptoKey]) -> String {
        keys.map { key in
            var text = "inline:" + Data(key.keySalt).base64EncodedString()
            if let lifetime = key.lifetime { text += "|" + lifetime }
            if let mki = key.mki { text += "|" + mki }
            return text
        }.joined(separator: ";")
    }

    private static func line(for attribute: SDPAttribute) -> String {
        "a=\(attribute.name)" + (attribute.value.map { ":\($0)" } ?? "")
    }
}
