import SignalingProtocol

/// What the client tells the app, in the order it happened (``SignalingClient/events``).
public enum SignalingEvent: Hashable, Sendable {
    // Room events, straight from the server.
    case memberJoined(Member)
    case memberLeft(ServerMessage.MemberLeft)
    case streamPublished(PublishedStream)
    case streamUnpublished(ServerMessage.StreamUnpublished)
    /// Publisher side: a subscriber wants a stream; reply with ``SignalingClient/answer(_:sdp:)``
    /// or ``SignalingClient/reject(_:reason:)``.
    case subscribeRequest(ServerMessage.SubscribeRequest)
    /// Publisher side: stop sending to this subscriber.
    case subscriberLeft(ServerMessage.SubscriberLeft)
    /// Subscriber side: the publisher's stream went away. The client keeps the subscription and
    /// subscribes again by itself when the stream is published again.
    case unsubscribed(ServerMessage.Unsubscribed)
    case signal(ServerMessage.Signal)
    /// A publisher's stream went still or moves again (`stream-state`).
    case streamState(ServerMessage.StreamStateChanged)
    /// An error the server sent that answers no request of ours (e.g. `line-too-long`).
    case serverError(SignalingError)
    /// The server is about to close the connection, and why.
    case goodbye(ServerMessage.Goodbye)

    // Subscriptions the client renewed on its own (after a reconnect or a re-publish).
    /// A renewed subscription was answered: open this SDP (it may differ from the last one).
    case subscribed(ServerMessage.Subscribed)
    /// Renewing a subscription failed; the client will try again when the stream is published.
    case subscribeFailed(publisher: MemberID, kind: StreamKind, error: SignalingError)

    // Connection life cycle.
    /// The connection was lost; every subscriber and subscription of ours is gone on the server.
    case disconnected(SignalingError)
    /// Waiting `delay` before reconnect attempt `attempt`.
    case reconnecting(attempt: Int, delay: Duration)
    /// Back in the room after a reconnect; streams are published again next, subscriptions renewed.
    case rejoined(ServerMessage.Joined)
    /// Reconnected while not in a room.
    case reconnected
    /// Republishing a stream after a rejoin failed.
    case republishFailed(kind: StreamKind, error: SignalingError)
    /// The client is finished: closed by the app (nil) or by an error it will not retry. Last event.
    case closed(SignalingError?)
}
