#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension [UInt8] {
    /// Decodes padded base64 (RFC 4648 §4) and accepts only its canonical form, so one key has
    /// one spelling: the text must be exactly what encoding the bytes gives back.
    init?(canonicalBase64 text: some StringProtocol) {
        guard let data = Data(base64Encoded: String(text)), data.base64EncodedString() == text else { return nil }
        self = [UInt8](data)
    }
}
