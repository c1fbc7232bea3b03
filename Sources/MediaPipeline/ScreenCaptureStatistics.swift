import ProcessSupport

/// The X11 capture (`--video x11`) for the status line and `--stats-json`: what is captured,
/// how, and what it costs per frame.
public struct ScreenCaptureStatistics: Sendable, Codable, Equatable {
    public var display: String
    /// "screen 1920x1080", "monitor 'A' 960x1080+960+0", "window 0x200001 …", "region …".
    public var target: String
    /// MIT-SHM (false: the GetImage fallback).
    public var sharedMemory: Bool
    public var framesGrabbed: Int
    /// Mean grab time per frame, wall clock (the X requests, the server's copy into the segment,
    /// the change comparison), ms.
    public var grabMilliseconds: Double
    /// Of it, this process's CPU time (the X server's copy runs on the server's), ms.
    public var grabCPUMilliseconds: Double
    /// Of it, the block comparison that confirms what changed, ms.
    public var compareMilliseconds: Double
    /// Mean BGRX → I420 time per conversion (scaling and the cursor included), ms. An unchanged
    /// grab is not converted, so this is what one conversion costs, not a mean over grabs.
    public var convertMilliseconds: Double
    /// Grabs that were converted (fewer than ``framesGrabbed`` when the screen is still).
    public var conversions: Int
    /// The share of the last picture that changed, %.
    public var changedPercent: Double
    public var damageEvents: Int
    /// 32x32 blocks the comparison found changed outside what DAMAGE reported.
    public var changesMissedByDamage: Int
    /// Grabs with nothing reported changed (`X11Capture`'s quiet grabs), and of them those that
    /// read the comparison's stripe; the others read nothing.
    public var quietGrabs = 0
    public var stripeReads = 0

    /// "x11 :99 screen 1920x1080 shm 30.0/s grab 2.81 ms (cpu 0.60) convert 1.20 ms changed 2.3%".
    func statusText(grabRate: Double?) -> String {
        let rate = grabRate.map { " \(fixedDecimal($0, places: 1))/s" } ?? ""
        return "x11 \(display) \(target) \(sharedMemory ? "shm" : "getimage")\(rate)"
            + " grab \(fixedDecimal(grabMilliseconds, places: 2)) ms (cpu \(fixedDecimal(grabCPUMilliseconds, places: 2)))"
            + " convert \(fixedDecimal(convertMilliseconds, places: 2)) ms"
            + " changed \(fixedDecimal(changedPercent, places: 1))%"
    }
}
