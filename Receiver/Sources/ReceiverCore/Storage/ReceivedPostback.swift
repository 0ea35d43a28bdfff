@_spi(Servers) import Attribution
import Foundation

/// A request's body, id and arrival, on its way to verification (the id is its record's `source`; the arrival
/// is what the pipeline decodes a valid postback as of, with a schema).
struct ReceivedBody: Sendable {
    let body: [UInt8]
    let requestID: String
    /// When the request arrived, in whole milliseconds since 1970 (UTC).
    let receivedMilliseconds: Int64

    /// The arrival as a `Date`: what ``ReceivedPostback/received`` is for the same request.
    var arrival: Date { Date(timeIntervalSince1970: Double(receivedMilliseconds) / 1000) }
}

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
    /// The verdict and record: the pipeline's, then marked duplicate if the store has seen the postback already
    /// (which takes its ``decoded`` away: a duplicate is not a conversion).
    var verified: VerifiedPostback

    /// Its conversion as `--schema` reads it, as of its arrival: the pipeline's decoding
    /// (``VerifiedPostback/decoded``), nil without a schema, and for anything but a valid (so not duplicate)
    /// postback.
    var decoded: DecodedConversion? { verified.decoded }

    /// When it arrived, as a `Date`.
    var received: Date { Date(timeIntervalSince1970: Double(receivedMilliseconds) / 1000) }

    /// The JSON Lines record of its (final) verdict, the request id its `source`; with a schema, a valid
    /// postback's record has `decoded`, as of its arrival (as the command line's has, as of the run's start).
    var record: [UInt8] {
        decoded.map { $0.adding(to: verified.record) } ?? verified.record
    }
}
