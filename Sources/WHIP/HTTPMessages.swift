import NIOHTTP1

/// One request, whole: WHIP bodies are small SDP texts, sent in one write.
struct HTTPRequest: Sendable {
    var method: HTTPMethod
    var url: WHIPURL
    var headers: HTTPHeaders
    var body: [UInt8]

    /// "POST http://host/path", for messages.
    var summary: String { "\(method.rawValue) \(url)" }
}

/// One response, whole, within the configured limits.
struct HTTPResponse: Sendable {
    var status: Int
    var headers: HTTPHeaders
    var body: [UInt8]

    /// "201 Created": the standard reason phrase, never the server's own (which is untrusted text).
    var statusText: String {
        let phrase = HTTPResponseStatus(statusCode: status).reasonPhrase
        return phrase.isEmpty ? "\(status)" : "\(status) \(phrase)"
    }

    /// RFC 9110 §8.3.1: the media type of Content-Type, lowercased, without parameters.
    var mediaType: String? {
        guard let value = headers.first(name: "content-type") else { return nil }
        let type = value.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return type.trimmingSpaces.lowercased()
    }

    /// The Content-Type as received, fit for a message.
    var contentTypeForMessage: String {
        headers.first(name: "content-type").map { Printable.text($0, limit: 100) } ?? "none"
    }

    /// Up to 200 characters of a text body (or one without a type), printable ASCII only, the
    /// token cut out before the cut to length; nil when there is none or it is not text.
    func bodyForMessage(redacting token: String?) -> String? {
        guard !body.isEmpty else { return nil }
        if let type = mediaType {
            let text =
                type.hasPrefix("text/") || type.hasSuffix("json") || type.hasSuffix("xml")
                || type == "application/sdp" || type == "application/trickle-ice-sdpfrag"
            guard text else { return nil }
        }
        var text = String(decoding: body, as: UTF8.self)
        if let token, !token.isEmpty {
            text = text.replacing(token, with: "[redacted]")
        }
        let snippet = Printable.text(text, limit: 200)
        return snippet.isEmpty ? nil : snippet
    }

    /// The values of a list header (RFC 9110 §5.6.1) across all its fields, trimmed, empty ones dropped.
    func listValues(_ name: String) -> [Substring] {
        headers[name].flatMap { $0.split(separator: ",") }.map(\.trimmingSpaces).filter { !$0.isEmpty }
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs (OWS).
    var trimmingSpaces: Substring {
        let start = firstIndex { $0 != " " && $0 != "\t" } ?? endIndex
        let end = lastIndex { $0 != " " && $0 != "\t" }.map { index(after: $0) } ?? start
        return self[start..<end]
    }
}

extension String {
    var trimmingSpaces: Substring { self[...].trimmingSpaces }
}
