import Attribution
import Foundation

/// One request's postback as the receiver keeps it: the bytes received, where and when, the verdict, and the JSON
/// Lines record (the command line's record, with the request id as its `source`).
struct ReceivedPostback: Sendable {
    /// The body exactly as received.
    let body: [UInt8]
    /// The request's id: the record's `source`, and what a later duplicate's `duplicate-of-source` names.
    let requestID: String
    let route: ReceiverRoute
    /// When the request arrived, in whole milliseconds since 1970 (UTC).
    let receivedMilliseconds: Int64
    /// The verdict: the verifier's, then marked duplicate if the store has seen the postback already.
    var result: VerificationResult

    init(body: [UInt8], requestID: String, route: ReceiverRoute, receivedMilliseconds: Int64,
                result: VerificationResult) {
        self.body = body
        self.requestID = requestID
        self.route = route
        self.receivedMilliseconds = receivedMilliseconds
        self.result = result
    }

    /// When it arrived, as a `Date`.
    var received: Date { Date(timeIntervalSince1970: Double(receivedMilliseconds) / 1000) }

    /// The JSON Lines record of its (final) result.
    var record: [UInt8] {
        JSONLinesRecord.render(result, sourceLabel: requestID)
    }
}
