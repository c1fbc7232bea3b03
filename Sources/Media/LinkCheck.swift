import COpus
import CSpeexDSP
import CX264
import CYUV

enum LinkCheck {
    static func versions() -> String {
        let opus = String(cString: opus_get_version_string())
        return "x264 \(rtc_x264_build()), \(opus), yuv \(LIBYUV_VERSION)"
    }
}
