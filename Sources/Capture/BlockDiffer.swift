import Glibc
import Media

/// What really changed between two pictures: 32x32-pixel blocks of a fresh picture compared
/// against the reference, the picture last handed on (libwebrtc's differ uses the same block
/// size). DAMAGE only says which blocks to look at first; it can miss changes (compositors, some
/// drivers) or flood.
///
/// The differ holds no pixels: the capture reads each picture into a scratch buffer beside the
/// reference. When every block was compared the fresh picture becomes the reference as it is (the
/// caller swaps the two buffers) and nothing is copied; otherwise the changed blocks are copied
/// into the reference, and the blocks left out keep the last picture there, so a change DAMAGE
/// missed still differs when the stripe reaches it. One mark per block, reused.
final class BlockDiffer {
    static let blockSize = 32
    /// One block row in `stripeCount` is checked each grab even without damage there.
    static let stripeCount = 8

    /// Per block: what to check and what was found.
    enum Mark {
        static let skip: UInt8 = 0
        static let damaged: UInt8 = 1
        static let stripe: UInt8 = 2
        static let changed: UInt8 = 0x80
    }

    private(set) var width = 0
    private(set) var height = 0
    private var marks: [UInt8] = []
    private var blocksX = 0
    private var blocksY = 0
    private var stripe = 0
    /// Blocks the stripe found changed outside the damage: a miss only if the next grab's damage
    /// does not cover them either. DAMAGE is read just before the picture, so a change painted in
    /// between is in the picture but reported with the next damage, not missed.
    private var suspects: [Int] = []
    /// Whether the last comparison's stripe found changes damage did not report: the next grab
    /// must compare, to tell a miss from damage that came late.
    var hasSuspects: Bool { !suspects.isEmpty }
    /// Scratch for merging runs of changed blocks into rectangles, kept between grabs.
    private var rects: [PixelRect] = []
    private var openRuns: [(start: Int, end: Int, rect: Int)] = []
    private var rowRuns: [(start: Int, end: Int, rect: Int)] = []

    private var stride: Int { width * 4 }

    /// A first picture or a new size: the caller takes its fresh picture as the reference whole.
    func reset(width: Int, height: Int) {
        self.width = width
        self.height = height
        suspects.removeAll(keepingCapacity: true)
        blocksX = (width + Self.blockSize - 1) / Self.blockSize
        blocksY = (height + Self.blockSize - 1) / Self.blockSize
        if marks.count < blocksX * blocksY {
            marks = [UInt8](repeating: 0, count: blocksX * blocksY)
        }
    }

    /// Starts a comparison: all blocks (`everything`), or none until damage and the stripe are marked.
    func begin(everything: Bool) {
        let count = blocksX * blocksY
        marks.withUnsafeMutableBufferPointer { marks in
            for index in 0..<count { marks[index] = everything ? Mark.damaged : Mark.skip }
        }
    }

    /// Marks the blocks under a damaged rectangle (picture coordinates).
    func markDamaged(_ rect: PixelRect) {
        let area = rect.clipped(to: PixelRect(x: 0, y: 0, width: width, height: height))
        guard !area.isEmpty else { return }
        let firstColumn = area.x / Self.blockSize
        let lastColumn = (area.x + area.width - 1) / Self.blockSize
        for row in (area.y / Self.blockSize)...((area.y + area.height - 1) / Self.blockSize) {
            for column in firstColumn...lastColumn { marks[row * blocksX + column] = Mark.damaged }
        }
    }

    /// The pixel rows of the block rows `markStripe` marks next: what a quiet grab reads. Kept
    /// in one array reused from grab to grab.
    func nextStripeRows() -> [Range<Int>] {
        stripeRows.removeAll(keepingCapacity: true)
        var row = stripe
        while row < blocksY {
            stripeRows.append((row * Self.blockSize)..<min((row + 1) * Self.blockSize, height))
            row += Self.stripeCount
        }
        return stripeRows
    }
    private var stripeRows: [Range<Int>] = []

    /// Marks the next 1/8 of block rows outside the damage, so a change damage missed is found
    /// within eight grabs; `all` marks every unmarked block (damage recently missed something).
    func markStripe(all: Bool) {
        for row in 0..<blocksY where all || row % Self.stripeCount == stripe {
            for column in 0..<blocksX where marks[row * blocksX + column] == Mark.skip {
                marks[row * blocksX + column] = Mark.stripe
            }
        }
        stripe = (stripe + 1) % Self.stripeCount
    }

    /// Compares the marked blocks of `fresh` against `reference` (`width * 4` bytes a row) and fills
    /// `area` with merged rectangles. Returns the changed pixels, the changed blocks damage missed
    /// (found by the stripe last grab and not in this grab's damage either), and whether every
    /// block was compared: then `fresh` is the new picture whole and the caller takes it as the
    /// reference; otherwise the changed blocks were copied into `reference`, which is the new
    /// picture. Only marked blocks are read from `fresh`, so a grab may read just their rows.
    ///
    /// Row by row, not block by block: each pixel row of a block row is compared in runs of
    /// adjacent blocks still unchanged, one `memcmp` a run (a 1080p picture is 65,000 block rows
    /// of 128 bytes, and a call apiece cost more than the comparing); only a run that differs is
    /// split to find its blocks, which then drop out of the rows below. A changed block thus
    /// costs the rows down to its first difference, and a repaint that changed every block next to
    /// nothing.
    ///
    /// With `reportingRuns`, `changedRun` gets each block row's runs of adjacent changed blocks
    /// (picture coordinates) as soon as that block row is compared, while its pixels are in this
    /// core's cache: the converter reads them there instead of from memory after the whole
    /// comparison. It returns false to hear of no more runs (its conversion failed). Not
    /// escaping, so a grab allocates nothing for it.
    func compare(
        _ fresh: BorrowedBGRXPicture,
        against reference: UnsafeMutableRawPointer,
        into area: inout ChangedArea,
        reportingRuns: Bool = false,
        changedRun: (PixelRect) -> Bool = { _ in true }
    ) -> (changedPixels: Int, missed: Int, everyBlock: Bool) {
        var reporting = reportingRuns
        guard fresh.width == width, fresh.height == height else { return (0, 0, false) }
        var changedPixels = 0
        // Last grab's suspects that this grab's damage does not cover were missed by DAMAGE.
        var missed = 0
        for index in suspects where index < marks.count && marks[index] != Mark.damaged { missed += 1 }
        suspects.removeAll(keepingCapacity: true)
        let stride = self.stride
        let size = Self.blockSize
        let width = self.width
        let count = blocksX * blocksY
        let everyBlock = marks.withUnsafeBufferPointer { !$0[0..<count].contains(Mark.skip) }
        marks.withUnsafeMutableBufferPointer { all in
            for blockRow in 0..<blocksY {
                let marks = UnsafeMutableBufferPointer(rebasing: all[(blockRow * blocksX)..<((blockRow + 1) * blocksX)])
                let top = blockRow * size
                let bottom = min(top + size, height)
                let pending = { (column: Int) in marks[column] != Mark.skip && marks[column] & Mark.changed == 0 }
                for row in top..<bottom {
                    let current = fresh.base.advanced(by: row * fresh.stride)
                    let previous = reference.advanced(by: row * stride)
                    var column = 0
                    while column < blocksX {
                        guard pending(column) else {
                            column += 1
                            continue
                        }
                        let start = column
                        while column < blocksX && pending(column) { column += 1 }
                        let left = start * size * 4
                        let right = min(column * size, width) * 4
                        if memcmp(current.advanced(by: left), previous.advanced(by: left), right - left) == 0 {
                            continue
                        }
                        for block in start..<column {
                            let blockLeft = block * size * 4
                            let blockRight = min((block + 1) * size, width) * 4
                            let bytes = blockRight - blockLeft
                            guard
                                memcmp(current.advanced(by: blockLeft), previous.advanced(by: blockLeft), bytes) != 0
                            else { continue }
                            if marks[block] == Mark.stripe { suspects.append(blockRow * blocksX + block) }
                            marks[block] |= Mark.changed
                            changedPixels += bytes / 4 * (bottom - top)
                        }
                    }
                }
                if reporting {
                    Self.forEachChangedRun(in: UnsafeBufferPointer(marks)) { start, end in
                        let left = start * size
                        let run = PixelRect(x: left, y: top, width: min(end * size, width) - left, height: bottom - top)
                        reporting = changedRun(run)
                        return reporting
                    }
                }
                // Every block compared: the caller swaps, nothing to copy. Else the changed blocks
                // into the reference: their rows above the first difference are equal, so whole
                // block rows are copied, a run of adjacent blocks at a time.
                guard !everyBlock else { continue }
                for row in top..<bottom {
                    let current = fresh.base.advanced(by: row * fresh.stride)
                    let previous = reference.advanced(by: row * stride)
                    Self.forEachChangedRun(in: UnsafeBufferPointer(marks)) { start, end in
                        let left = start * size * 4
                        let right = min(end * size, width) * 4
                        previous.advanced(by: left).copyMemory(
                            from: current.advanced(by: left),
                            byteCount: right - left
                        )
                        return true
                    }
                }
            }
        }
        mergeRuns(into: &area)
        return (changedPixels, missed, everyBlock)
    }

    /// Calls `body` with each run of adjacent changed blocks in one block row's marks (the
    /// columns `start..<end`) until it returns false.
    @inline(__always)
    private static func forEachChangedRun(in marks: UnsafeBufferPointer<UInt8>, _ body: (Int, Int) -> Bool) {
        var column = 0
        while column < marks.count {
            guard marks[column] & Mark.changed != 0 else {
                column += 1
                continue
            }
            let start = column
            while column < marks.count && marks[column] & Mark.changed != 0 { column += 1 }
            guard body(start, column) else { return }
        }
    }

    /// Horizontally adjacent changed blocks of a block row become one run; a run with the same
    /// columns as one ending in the row above extends that rectangle downwards.
    private func mergeRuns(into area: inout ChangedArea) {
        rects.removeAll(keepingCapacity: true)
        openRuns.removeAll(keepingCapacity: true)
        for blockRow in 0..<blocksY {
            rowRuns.removeAll(keepingCapacity: true)
            let top = blockRow * Self.blockSize
            let rowHeight = min(Self.blockSize, height - top)
            marks.withUnsafeBufferPointer { all in
                let row = UnsafeBufferPointer(rebasing: all[(blockRow * blocksX)..<((blockRow + 1) * blocksX)])
                Self.forEachChangedRun(in: row) { start, end in
                    if let open = openRuns.first(where: { $0.start == start && $0.end == end }) {
                        rects[open.rect].height += rowHeight
                        rowRuns.append((start, end, open.rect))
                    } else {
                        let left = start * Self.blockSize
                        let right = min(end * Self.blockSize, width)
                        rects.append(PixelRect(x: left, y: top, width: right - left, height: rowHeight))
                        rowRuns.append((start, end, rects.count - 1))
                    }
                    return true
                }
            }
            swap(&openRuns, &rowRuns)
        }
        for rect in rects { area.add(rect) }
    }
}
