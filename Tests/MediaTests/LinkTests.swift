import Testing
@testable import Media
@Test func links() { #expect(LinkCheck.versions().contains("x264 164")) ; print(LinkCheck.versions()) }
