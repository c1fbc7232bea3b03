#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The file system as the validation sees it: the only I/O in `publishOptions(files:)`, whose
/// checks are otherwise pure. `--video FILE.y4m` and `--audio FILE.wav` must exist, and
/// `--to-file` is read. (The files are opened and read for real when the session starts.)
public protocol FileAccess: Sendable {
    func fileExists(atPath path: String) -> Bool
    /// The whole file; nil when it cannot be read.
    func contents(atPath path: String) -> [UInt8]?
}

/// The process's file system, relative paths from its working directory.
public struct LocalFiles: FileAccess {
    public init() {}

    public func fileExists(atPath path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    public func contents(atPath path: String) -> [UInt8]? { FileManager.default.contents(atPath: path).map(Array.init) }
}
