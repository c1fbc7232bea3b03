import ArgumentParser
import WHIP

/// `--whip URL`, `--whip-token`, `--whip-ca`: publish into a WHIP endpoint (RFC 9725) too.
public struct WHIPArguments: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Also publish into this WHIP endpoint (RFC 9725), e.g. http://HOST:7080/whip/endpoint/ID.",
            discussion: "With --no-signal --no-preview it is the only destination."
        )
    )
    public var whip: Parsed<WHIPURL>?
    @Option(help: "WHIP: bearer token for the endpoint (never logged).") public var whipToken: Parsed<BearerToken>?
    @Option(help: "WHIP: for an https endpoint, trust only the PEM certificates in this file.")
    public var whipCa: String?

    public init() {}
}
