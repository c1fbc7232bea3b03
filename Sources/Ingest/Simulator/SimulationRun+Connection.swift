import Media

extension SimulationRun {
    /// Drops the connection without an end message, waits, and connects again (retrying while
    /// the host still holds the old session or is not listening).
    mutating func reconnect(_ old: IngestClient) async -> Bool {
        logger.info("dropping the connection", metadata: ["reconnect-in": "\(options.reconnectDelay) s"])
        await old.close()
        try? await Task.sleep(nanoseconds: UInt64(options.reconnectDelay * 1e9))
        let deadline = MonotonicClock.now() + 5_000_000_000
        while true {
            do {
                let fresh = try await IngestClient.connect(to: options.address, hello: hello)
                client = fresh
                summary.connections += 1
                realign(to: MonotonicClock.now())
                logger.info("reconnected")
                return true
            } catch {
                let retry = error.code == .connection || (error.code == .refused && error.endReason == .busy)
                guard retry, MonotonicClock.now() < deadline else {
                    summary.hostEnd = IngestSessionEnd(reason: error.endReason ?? .disconnected, message: error.message)
                    client = nil
                    return false
                }
                try? await Task.sleep(nanoseconds: 100_000_000)
            }
        }
    }

    /// Sends one malformed message and records the host's answer (or that none came).
    mutating func sendGarbage(_ garbage: GarbageKind, _ client: IngestClient) async {
        logger.info("sending a malformed message", metadata: ["kind": "\(garbage)"])
        try? await client.sendRaw(garbage.bytes)
        summary.hostEnd =
            await client.waitForEnd(timeout: .seconds(3))
            ?? IngestSessionEnd(reason: .disconnected, message: "the host did not answer the malformed message")
        await client.close()
    }
}
