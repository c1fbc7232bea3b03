import Logging
import Media

/// Plays the iOS broadcast extension against an ingest host, in real time: the synthetic screen
/// as full-range NV12 at a portrait phone size, app and microphone audio in uneven chunks, with
/// the seed's failure modes on request (bogus timestamps, pause, a dropped connection, garbage).
///
/// `rtc-capture-sim` is a thin command line over ``run(_:logger:)``; tests call it in-process.
public enum CaptureSimulator {
    /// Runs until the duration is over or the host ends the session. Throws for bad options and
    /// when the host cannot be reached or refuses the first hello.
    public static func run(
        _ options: CaptureSimulatorOptions,
        logger: Logger
    ) async throws(IngestError)
        -> CaptureSimulatorSummary
    {
        try options.validate()
        let screen: SyntheticScreenSource
        let writer: FullRangeNV12Writer
        do {
            screen = try SyntheticScreenSource(
                width: options.width,
                height: options.height,
                frameRate: options.frameRate
            )
            let buffer =
                options.rotation.swapsAxes ? (options.height, options.width) : (options.width, options.height)
            writer = try FullRangeNV12Writer(width: buffer.0, height: buffer.1)
        } catch {
            throw IngestError(.invalidOption, error.message)
        }
        var run = SimulationRun(options: options, screen: screen, writer: writer, logger: logger)
        try await run.start()
        await run.play()
        return run.summary
    }
}
