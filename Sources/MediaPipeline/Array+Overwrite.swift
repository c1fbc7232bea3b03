extension Array {
    /// Makes this array `sources.map(value)`, writing the elements in place when the counts
    /// match, so the counters published once a picture keep their storage.
    mutating func overwrite<Source>(from sources: [Source], _ value: (Source) -> Element) {
        guard count == sources.count else {
            self = sources.map(value)
            return
        }
        for index in sources.indices { self[index] = value(sources[index]) }
    }
}
