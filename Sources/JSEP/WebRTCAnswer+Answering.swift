import SDP

extension WebRTCAnswer {
    /// Answers `offer`: the first video m-section that can receive our H.264 carries it, the
    /// first audio m-section that can receive Opus carries that, every other m-section is
    /// rejected with port 0, and the transport is the offer's BUNDLE transport.
    ///
    /// Checks, in order (the first failure is the `JSEPError`): our configuration; an
    /// `a=group:BUNDLE`; for each medium we send, a section that is enabled, bundled, DTLS-SRTP,
    /// receiving, has a codec we can send and `a=rtcp-mux`; then the offerer-tagged section's ICE
    /// credentials, fingerprint and setup.
    public init(answering offer: WebRTCOffer, configuration: Configuration) throws {
        try ConfigurationCheck.validate(configuration)
        guard let bundle = offer.bundleGroup else {
            throw JSEPError(code: .notBundleable, reason: "the offer is not BUNDLE-able: no a=group:BUNDLE")
        }
        let plan = try SectionPlan(offer: offer, bundle: bundle, configuration: configuration)
        guard let taggedMid = bundle.mids.first, let tagged = offer.section(mid: taggedMid) else {
            throw JSEPError(code: .notBundleable, reason: "the offer is not BUNDLE-able: its BUNDLE group is empty")
        }
        let remote = try Self.remoteTransport(offer: offer, bundle: bundle, tagged: tagged)
        let localSetup = remote.setup.complement ?? configuration.setup
        let writer = AnswerWriter(
            offer: offer,
            plan: plan,
            bundleOrder: bundle.mids,
            localSetup: localSetup,
            configuration: configuration
        )
        let description = writer.description()
        let text: String
        do {
            text = try SDPWriter.write(description)
        } catch {
            throw JSEPError(code: .invalidConfiguration, reason: "the answer cannot be written: \(error)")
        }
        self.init(
            sdp: text,
            description: description,
            bundle: .bundle(writer.acceptedMids),
            video: plan.video,
            audio: plan.audio,
            rejectedSections: plan.rejected,
            remote: remote,
            localSetup: localSetup
        )
    }

    /// RFC 8843 §7.3.1: the bundle's transport is described by the offerer-tagged m-section (the
    /// first mid of the group). Candidates are gathered from every bundled section, since
    /// stacks differ in where they put them.
    /// `party` names the description in reasons: "offer" here, "answer" when we read a WHIP
    /// endpoint's answer (`PublishAnswer`).
    static func remoteTransport(
        offer: WebRTCOffer,
        bundle: MediaGroup,
        tagged: WebRTCOffer.MediaSection,
        party: String = "offer"
    ) throws -> RemoteTransport {
        guard let ice = tagged.iceCredentials else {
            let missing = [("a=ice-ufrag", tagged.iceUfrag), ("a=ice-pwd", tagged.icePassword)].filter { $0.1 == nil }
            throw JSEPError(
                code: .noICECredentials,
                reason: "the \(party) has no ICE credentials (no " + missing.map(\.0).joined(separator: ", no ") + ")"
            )
        }
        guard !tagged.fingerprints.isEmpty else {
            throw JSEPError(code: .noFingerprint, reason: "the \(party) has no a=fingerprint")
        }
        let checked = CertificateFingerprint.HashFunction.checked
        guard tagged.fingerprints.contains(where: { checked.contains($0.hashFunction) }) else {
            let offered = Set(tagged.fingerprints.map { Excerpt.of($0.hashFunction.rawValue, limit: 16) }).sorted()
            throw JSEPError(
                code: .noFingerprint,
                reason: "the \(party) has no a=fingerprint with sha-256, sha-384 or sha-512 (only "
                    + offered.joined(separator: ", ") + ")"
            )
        }
        guard let setup = tagged.setup else {
            throw JSEPError(
                code: .unsupportedSetup,
                reason: "the \(party) has no a=setup, so no DTLS role can be agreed (RFC 8842)"
            )
        }
        guard setup != .holdconn else {
            throw JSEPError(
                code: .unsupportedSetup,
                reason: "the \(party)'s a=setup is holdconn: it asks for no DTLS connection"
            )
        }
        var candidates: [ICECandidate] = []
        var skipped: [ICECandidate] = []
        var endOfCandidates = false
        for section in offer.sections where section.mid.map(bundle.mids.contains) == true {
            for candidate in section.candidates where !candidates.contains(candidate) { candidates.append(candidate) }
            for candidate in section.skippedCandidates where !skipped.contains(candidate) { skipped.append(candidate) }
            endOfCandidates = endOfCandidates || section.endOfCandidates
        }
        return RemoteTransport(
            ice: ice,
            iceOptions: tagged.iceOptions,
            isICELite: offer.isICELite,
            fingerprints: tagged.fingerprints,
            setup: setup,
            candidates: candidates,
            skippedCandidates: skipped,
            endOfCandidates: endOfCandidates
        )
    }
}
