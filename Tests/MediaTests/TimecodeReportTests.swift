import Media
import Testing

/// What a run of decoded pictures' strips adds up to.
@Suite struct TimecodeReportTests {
    typealias Value = TimecodeStrip.Value
    typealias Row = (frames: [Int], stale: [Int], outOfOrder: Int, repeated: Int, missing: Int, staleCount: Int)

    /// Frames in, repeated, skipped and backwards; a stale picture (a decoder's concealment)
    /// counts as readable but neither breaks the order nor fills a gap.
    @Test(
        arguments: [
            (frames: [1, 2, 3, 4], stale: [], outOfOrder: 0, repeated: 0, missing: 0, staleCount: 0),
            (frames: [1, 2, 2, 3], stale: [], outOfOrder: 0, repeated: 1, missing: 0, staleCount: 0),
            (frames: [1, 2, 5, 6], stale: [], outOfOrder: 0, repeated: 0, missing: 2, staleCount: 0),
            (frames: [1, 3, 2, 4], stale: [], outOfOrder: 1, repeated: 0, missing: 0, staleCount: 0),
            (frames: [1, 3, 2, 4], stale: [2], outOfOrder: 0, repeated: 0, missing: 1, staleCount: 1),
            (frames: [1, 2, 1, 1, 5], stale: [2, 3], outOfOrder: 0, repeated: 0, missing: 2, staleCount: 2),
        ] as [Row]
    )
    func counts(_ row: Row) {
        var report = TimecodeReport()
        for (index, frame) in row.frames.enumerated() {
            report.add(
                Value(frame: UInt32(frame), timeMs: UInt32(frame * 33)),
                stale: row.stale.contains(index)
            )
        }
        #expect(report.pictures == row.frames.count && report.readable == row.frames.count, "\(report)")
        #expect(report.outOfOrder == row.outOfOrder, "\(report)")
        #expect(report.repeated == row.repeated, "\(report)")
        #expect(report.missing == row.missing, "\(report)")
        #expect(report.stale == row.staleCount, "\(report)")
        #expect(report.description.contains("stale") == (row.staleCount > 0), "\(report)")
    }

    /// An unreadable strip counts as a picture, nothing else.
    @Test func anUnreadablePictureOnlyCountsAsAPicture() {
        var report = TimecodeReport()
        report.add(Value(frame: 7, timeMs: 0))
        report.add(nil)
        report.add(Value(frame: 8, timeMs: 33))
        #expect(report.pictures == 3 && report.readable == 2 && report.missing == 0, "\(report)")
    }
}
