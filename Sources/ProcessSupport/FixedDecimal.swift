/// `value` with exactly `places` digits after the point (0...6), rounded half away from zero:
/// `fixedDecimal(29.96, places: 1)` is `"30.0"`. What the status line needs from `printf`'s
/// `%.Nf`, without Foundation's `String(format:)`.
public func fixedDecimal(_ value: Double, places: Int) -> String {
    guard value.isFinite else { return value.isNaN ? "nan" : (value < 0 ? "-inf" : "inf") }
    let places = min(max(places, 0), 6)
    var scale: Double = 1
    for _ in 0..<places { scale *= 10 }
    let scaled = (abs(value) * scale).rounded(.toNearestOrAwayFromZero)
    // Beyond 2^53 a Double has no fraction digits left to show; print what it holds.
    guard scaled < 9.0e15 else { return value < 0 ? "-\(abs(value))" : "\(value)" }
    let units = UInt64(scaled)
    let divisor = UInt64(scale)
    let whole = units / divisor
    let sign = value < 0 && units != 0 ? "-" : ""
    guard places > 0 else { return "\(sign)\(whole)" }
    let fraction = String(units % divisor)
    let padding = String(repeating: "0", count: places - fraction.count)
    return "\(sign)\(whole).\(padding)\(fraction)"
}
