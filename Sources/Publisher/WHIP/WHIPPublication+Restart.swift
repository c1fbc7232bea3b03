import JSEP
import WHIP
import WebRTC

extension WHIPPublication {
    /// RFC 9725 §4.3.2: an ICE restart over PATCH. New local credentials (`restartICE`), sent
    /// with our candidates as an `application/trickle-ice-sdpfrag` (RFC 8840 §9) with
    /// `If-Match: "*"`; the `200` fragment carries the endpoint's new credentials (and
    /// candidates; simple-whip-server sends none, then the answer's still stand). DTLS and SRTP
    /// go on. Returns the new ETag.
    func restartICE(
        _ session: WHIPSession,
        transport: WebRTCTransport,
        answer: PublishAnswer
    ) async throws
        -> String?
    {
        let credentials = try transport.restartICE()
        update { $0.iceRestarts += 1 }
        let reply = try await client.patch(
            session,
            fragment: TrickleFragment(
                credentials: credentials,
                candidates: transport.localCandidates,
                endOfCandidates: true
            ).text(
                bundle: [PublishOffer.videoMid, PublishOffer.audioMid],
                firstMedia: "video 9 UDP/TLS/RTP/SAVPF \(PublishOffer.videoPayloadType)"
            ),
            iceRestart: true
        )
        guard reply.status == 200 else {
            throw PublishError(
                "the endpoint answered the ICE restart with \(reply.status), not 200 and its credentials"
            )
        }
        let fragment: TrickleFragment
        do {
            fragment = try TrickleFragment(parsing: reply.body)
        } catch let error as JSEPError {
            throw PublishError("the endpoint's ICE restart answer is refused: \(error.reason)")
        }
        guard let remote = fragment.credentials else {
            throw PublishError("the endpoint's ICE restart answer has no a=ice-ufrag and a=ice-pwd")
        }
        try transport.completeICERestart(
            remote: remote,
            candidates: fragment.candidates.isEmpty ? answer.remote.candidates : fragment.candidates
        )
        return reply.etag ?? session.etag
    }
}
