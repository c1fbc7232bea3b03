/// The room's viewer page (placeholder until the page lands).
public enum ViewerPage {
    public static let html = #"<!doctype html><title>rtc room</title><script src="/viewer.js"></script>"#
}
