import COpenSSL

extension DTLSSession {
    /// Runs the handshake as far as the datagrams so far allow.
    func advanceHandshake() -> DTLSOutput {
        OpenSSLErrorQueue.clear()
        let result = rtc_SSL_do_handshake()(ssl)
        if result == 1 { return completeHandshake() }
        switch rtc_SSL_get_error()(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            return DTLSOutput(datagrams: drainOutgoing())
        default:
            return fail(failureReason(during: "handshake"))
        }
    }

    /// After OpenSSL's handshake: check once more that a certificate with the expected
    /// fingerprint was presented (the verify callback already refused any other), that a profile
    /// was negotiated, and export the keys. Failing here sends close_notify, since the peer
    /// believes the handshake succeeded.
    private func completeHandshake() -> DTLSOutput {
        guard let certificate = rtc_SSL_get1_peer_certificate()(ssl) else {
            return failAfterHandshake(DTLSError(.noPeerCertificate, "the peer presented no certificate"))
        }
        let presented = try? DTLSFingerprint(certificate: certificate)
        rtc_X509_free()(certificate)
        guard presented == configuration.remoteFingerprint else {
            return failAfterHandshake(peerCheck.mismatchError)
        }
        guard let selected = rtc_SSL_get_selected_srtp_profile()(ssl),
            let profile = DTLSSRTPProfile(rawValue: UInt16(truncatingIfNeeded: selected.pointee.id)),
            configuration.srtpProfiles.contains(profile)
        else {
            return failAfterHandshake(
                DTLSError(
                    .noSRTPProfile,
                    "the handshake negotiated no SRTP profile of ours (offered "
                        + configuration.srtpProfiles.map(\.openSSLName).joined(separator: ", ") + ")"
                )
            )
        }
        do {
            return markConnected(try exportKeys(profile))
        } catch let error as DTLSError {
            return failAfterHandshake(error)
        } catch {
            return failAfterHandshake(DTLSError(.keyExportFailed, "\(error)"))
        }
    }

    /// RFC 5764 §4.2: the RFC 5705 exporter with the label "EXTRACTOR-dtls_srtp" and no context,
    /// 2 × (key + salt) bytes, split by `DTLSSRTPKeys`. The exported bytes are wiped once split.
    private func exportKeys(_ profile: DTLSSRTPProfile) throws -> DTLSSRTPKeys {
        var exported = [UInt8](repeating: 0, count: profile.exportedLength)
        defer { exported.withUnsafeMutableBytes { rtc_OPENSSL_cleanse()($0.baseAddress, $0.count) } }
        let label = DTLSSRTPKeys.exporterLabel
        OpenSSLErrorQueue.clear()
        let result = exported.withUnsafeMutableBufferPointer { buffer in
            rtc_SSL_export_keying_material()(
                ssl,
                buffer.baseAddress,
                buffer.count,
                label,
                label.utf8.count,
                nil,
                0,
                0
            )
        }
        guard result == 1 else {
            throw DTLSError(
                .keyExportFailed,
                "SSL_export_keying_material: " + OpenSSLErrorQueue.drainedText(or: "failed")
            )
        }
        return try DTLSSRTPKeys(exportedKeyingMaterial: exported, profile: profile, role: role)
    }

    /// Sends close_notify, then fails: for failures found after OpenSSL's handshake succeeded.
    private func failAfterHandshake(_ error: DTLSError) -> DTLSOutput {
        OpenSSLErrorQueue.clear()
        _ = rtc_SSL_shutdown()(ssl)
        OpenSSLErrorQueue.clear()
        return fail(error)
    }

    /// Feeds the connected session: OpenSSL answers a retransmitted final flight (its last flight
    /// was lost), takes close_notify and alerts. Application data is dropped and counted.
    func readConnection() -> DTLSOutput {
        OpenSSLErrorQueue.clear()
        return withUnsafeTemporaryAllocation(byteCount: 16_384, alignment: 1) { buffer in
            while true {
                let read = rtc_SSL_read()(ssl, buffer.baseAddress, Int32(buffer.count))
                if read > 0 {
                    countIgnoredApplicationData(Int(read))
                    continue
                }
                switch rtc_SSL_get_error()(ssl, read) {
                case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                    return DTLSOutput(datagrams: drainOutgoing())
                case SSL_ERROR_ZERO_RETURN:
                    // close_notify: answer with ours (RFC 5246 §7.2.1), then the session is over.
                    _ = rtc_SSL_shutdown()(ssl)
                    OpenSSLErrorQueue.clear()
                    return markClosedByPeer()
                default:
                    return fail(failureReason(during: "connection"))
                }
            }
        }
    }

    /// Names why OpenSSL failed: our fingerprint check first (OpenSSL only says "certificate
    /// verify failed"), then an alert from the peer, then OpenSSL's own reasons.
    private func failureReason(during phase: String) -> DTLSError {
        let entries = OpenSSLErrorQueue.drain()
        if peerCheck.mismatched { return peerCheck.mismatchError }
        if let alert = OpenSSLErrorQueue.receivedAlert(in: entries) {
            let name = OpenSSLErrorQueue.alertName(alert)
            let hint =
                alert == SSL_AD_BAD_CERTIFICATE ? " (our certificate does not match the fingerprint it expects?)" : ""
            return DTLSError(.alertReceived, "the peer ended the \(phase) with fatal alert '\(name)' (\(alert))\(hint)")
        }
        let reasons = entries.map(\.text).joined(separator: "; ")
        if entries.contains(where: {
            ERR_GET_LIB($0.code) == ERR_LIB_SSL && ERR_GET_REASON($0.code) == SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE
        }) {
            return DTLSError(.noPeerCertificate, "the peer sent no certificate: \(reasons)")
        }
        let code: DTLSError.Code = phase == "handshake" ? .handshakeFailed : .connectionFailed
        return DTLSError(code, "OpenSSL failed the \(phase): " + (reasons.isEmpty ? "no reason given" : reasons))
    }
}
