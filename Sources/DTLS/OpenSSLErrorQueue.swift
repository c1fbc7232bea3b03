import COpenSSL

/// OpenSSL's per-thread error queue, read out as text for `DTLSError` messages.
///
/// Every OpenSSL call that can fail pushes its reasons onto a queue owned by the calling thread
/// and leaves them there. A session clears the queue before each call it makes and drains it after
/// a failure, so a message names this failure's reasons and never a stale one from another
/// session that ran earlier on the same thread.
enum OpenSSLErrorQueue {
    /// One queued error: its packed code (for the alert test) and OpenSSL's text for it.
    struct Entry {
        let code: UInt
        let text: String
    }

    static func clear() { rtc_ERR_clear_error()() }

    /// Takes every queued error, oldest first.
    static func drain() -> [Entry] {
        var entries: [Entry] = []
        while true {
            let code = rtc_ERR_get_error()()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            rtc_ERR_error_string_n()(code, &buffer, buffer.count)
            let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            entries.append(Entry(code: code, text: text))
        }
        return entries
    }

    /// The queued errors joined into one line, or `fallback` when the queue is empty.
    static func drainedText(or fallback: String) -> String {
        let entries = drain()
        return entries.isEmpty ? fallback : entries.map(\.text).joined(separator: "; ")
    }

    /// The alert the peer sent, if the error is OpenSSL's "received a fatal alert" reason: OpenSSL
    /// reports a received alert as reason SSL_AD_REASON_OFFSET (1000) plus its description.
    static func receivedAlert(in entries: [Entry]) -> Int32? {
        for entry in entries where ERR_GET_LIB(entry.code) == ERR_LIB_SSL {
            let reason = ERR_GET_REASON(entry.code)
            if reason >= SSL_AD_REASON_OFFSET, reason < SSL_AD_REASON_OFFSET + 256 {
                return reason - SSL_AD_REASON_OFFSET
            }
        }
        return nil
    }

    /// OpenSSL's long name for an alert description ("bad certificate", "handshake failure").
    static func alertName(_ description: Int32) -> String {
        guard let name = rtc_SSL_alert_desc_string_long()(description) else { return "alert \(description)" }
        return String(cString: name)
    }
}
