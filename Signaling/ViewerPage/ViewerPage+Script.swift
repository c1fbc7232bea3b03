extension ViewerPage {
    public static let script = #"// placeholder"#
}
