extension WHIPURL {
    /// RFC 3986 §5.2: the URL a reference names when read against this one, as for a Location
    /// header (RFC 9110 §10.2.2) or a redirect target: an absolute URL, a network-path (`//host/x`),
    /// an absolute path (`/x`), a relative path (`x`, `../x`) or a query alone (`?x`).
    ///
    /// Throws `.invalidURL` when the reference is not http or https, or has characters a URL cannot.
    public func resolving(reference: String) throws(WHIPError) -> WHIPURL {
        let bytes = Array(reference.utf8)
        let fail = { (why: String) in
            WHIPError(
                .invalidURL,
                "'\(Printable.text(reference, limit: 200))' does not resolve against \(self) to an http or https URL: \(why)"
            )
        }
        guard bytes.count <= Self.maximumLength else { throw fail("longer than \(Self.maximumLength) bytes") }
        if let bad = bytes.first(where: { !(0x21...0x7E).contains($0) }) {
            throw fail("it contains \(bad == 0x20 ? "a space" : "a control or non-ASCII character")")
        }
        // §5.2.2: a reference with a scheme stands alone.
        if Self.hasScheme(bytes) {
            return try WHIPURL(parsing: reference)
        }
        // A network-path reference keeps only the scheme.
        if bytes.starts(with: "//".utf8) {
            return try WHIPURL(parsing: "\(scheme.rawValue):\(reference)")
        }
        // §3.5: the fragment is for the client alone.
        let target = bytes.prefix { $0 != UInt8(ascii: "#") }
        if let reason = Self.invalidCharacter(in: target) {
            throw fail(reason)
        }
        let (referencePath, referenceQuery) = Self.split(String(decoding: target, as: UTF8.self))
        let path: String
        let query: String?
        if referencePath.isEmpty {
            path = self.path
            query = referenceQuery ?? self.query
        } else if referencePath.hasPrefix("/") {
            path = Self.removeDotSegments(referencePath)
            query = referenceQuery
        } else {
            path = Self.removeDotSegments(Self.merge(base: self.path, reference: referencePath))
            query = referenceQuery
        }
        return WHIPURL(scheme: scheme, host: host, port: port, pathAndQuery: Self.join(path, query))
    }

    /// §3.1: `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"` before any "/", "?" or "#".
    static func hasScheme(_ bytes: [UInt8]) -> Bool {
        guard let first = bytes.first, first.isLetter else { return false }
        for byte in bytes.dropFirst() {
            if byte == UInt8(ascii: ":") { return true }
            guard byte.isLetter || (0x30...0x39).contains(byte) || Array("+-.".utf8).contains(byte) else {
                return false
            }
        }
        return false
    }

    /// §5.2.3: the base path up to its last "/", then the reference (the base always has a path).
    static func merge(base: String, reference: String) -> String {
        guard let slash = base.lastIndex(of: "/") else { return "/" + reference }
        return base[...slash] + reference
    }

    /// §5.2.4: "." and ".." segments applied and removed; ".." never climbs above the root.
    static func removeDotSegments(_ path: String) -> String {
        let absolute = path.hasPrefix("/")
        var segments = path.split(separator: "/", omittingEmptySubsequences: false)
        if absolute {
            segments.removeFirst()
        }
        var output: [Substring] = []
        for (index, segment) in segments.enumerated() {
            let isLast = index == segments.count - 1
            switch segment {
            case ".":
                if isLast { output.append("") }
            case "..":
                if !output.isEmpty { output.removeLast() }
                if isLast { output.append("") }
            default:
                output.append(segment)
            }
        }
        return (absolute ? "/" : "") + output.joined(separator: "/")
    }
}

extension UInt8 {
    fileprivate var isLetter: Bool { (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self) }
}
