import CLinux

#if canImport(Glibc)
    import Glibc
#endif

/// Process-wide allocator settings for a process that moves multi-megabyte pictures between
/// threads, called once by the executables before any media flows.
///
/// glibc serves a request above its mmap threshold with its own mapping, returned to the
/// system on free. But the threshold moves: each such free raises it to the freed size (up to
/// 32 MiB), after which 1–3 MB pictures come from per-thread heap arenas, where a picture
/// allocated on the socket thread and freed on the media thread leaves holes that are rarely
/// given back. Under a capture side flooding 886x1920 frames that took the peak RSS of
/// rtc-publish from about 80 MB to over 250 MB. A fixed threshold keeps pictures in their own
/// mappings (a page-fault cost of well under a millisecond per picture) and memory bounded.
public enum FrameMemory {
    /// Requests from this size up get their own mapping: every picture buffer, no packet.
    public static let mappingThreshold: Int32 = 256 * 1024

    /// `M_MMAP_THRESHOLD` in glibc's <malloc.h>, which the Glibc module does not import.
    static let mmapThresholdParameter: Int32 = -3

    /// Fixes the threshold (looked up at run time, as `mallopt` is glibc's and not in the
    /// module map; on another C library this does nothing). True when it took effect.
    @discardableResult
    public static func keepLargeBuffersMapped() -> Bool {
        #if canImport(Glibc)
            typealias MallOpt = @convention(c) (Int32, Int32) -> Int32
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return false }
            let mallopt = unsafeBitCast(symbol, to: MallOpt.self)
            return mallopt(mmapThresholdParameter, mappingThreshold) == 1
        #else
            return false
        #endif
    }

    /// Turns transparent huge pages off for this process (`PR_SET_THP_DISABLE`); true when it
    /// took effect. With THP set to `always` (as on the machines the benchmarks ran on), the kernel
    /// backs any touched 2 MB-aligned stretch of anonymous memory with one huge page: x264's
    /// frame buffers and the heap arenas were six of them, 12 MB resident where the pages used
    /// were fewer. The paced 720p benchmark job peaked at 38.1 MB with them and 34.0 MB without
    /// (Docs/benchmarks.md, "Memory").
    @discardableResult
    public static func avoidHugePages() -> Bool {
        rtc_disable_transparent_huge_pages() == 0
    }

    /// Gives the free memory of every malloc arena back to the system (`malloc_trim(0)`, glibc's,
    /// looked up at run time like `mallopt`); true when it released any. glibc keeps what a
    /// thread freed in that thread's arena for reuse; WebRTC viewers each run libnice on a GLib
    /// thread of their own, so after a crowd of viewers left the process kept their memory
    /// resident (Docs/webrtc.md, "What a viewer costs"). Called when the last viewer is gone,
    /// never on the media path: it walks every arena under its lock.
    @discardableResult
    public static func returnFreeMemory() -> Bool {
        #if canImport(Glibc)
            typealias MallocTrim = @convention(c) (Int) -> Int32
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return false }
            let trim = unsafeBitCast(symbol, to: MallocTrim.self)
            return trim(0) == 1
        #else
            return false
        #endif
    }
}
