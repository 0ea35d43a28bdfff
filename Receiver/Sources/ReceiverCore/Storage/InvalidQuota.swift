@_spi(Servers) import Attribution
import Foundation

/// How many invalid bodies may still be stored in the current clock hour (`--invalid-quota`). Forgeries cost an
/// attacker nothing, so storing every one would let anyone fill the disk: beyond the quota only what is proven
/// worthless goes unstored (``OverQuotaTreatment``).
///
/// A unit counts a row stored: it is taken while the group's rows are built (before the commit, so that one group
/// cannot overrun the quota) and given back (``giveBack(_:at:)``) when the group is not stored. A request answered
/// 500 has stored nothing, so it must not spend the quota: otherwise a full disk, or anyone able to cause storage
/// failures, would leave the hour's quota spent and every later invalid body that could still be genuine answered
/// 503 once storage worked again.
final class InvalidQuota: @unchecked Sendable {
    private let lock = NSLock()
    private let perHour: Int
    private var hour: Int64 = -1
    private var used = 0

    init(perHour: Int) {
        self.perHour = perHour
    }

    /// Takes one unit of the quota for the hour holding `milliseconds`; false when the hour's quota is spent.
    func take(at milliseconds: Int64) -> Bool {
        let thisHour = milliseconds / 3_600_000
        lock.lock()
        defer { lock.unlock() }
        if thisHour != hour {
            hour = thisHour
            used = 0
        }
        guard used < perHour else { return false }
        used += 1
        return true
    }

    /// Returns `count` units taken for the hour holding `milliseconds` whose rows were not stored. Units of an hour
    /// that has already ended are not returned: that hour's quota no longer applies.
    func giveBack(_ count: Int, at milliseconds: Int64) {
        guard count > 0 else { return }
        lock.lock()
        defer { lock.unlock() }
        if milliseconds / 3_600_000 == hour { used = max(0, used - count) }
    }
}

/// What becomes of an invalid body once the hour's invalid quota is spent. The quota bounds what an attacker can
/// make the receiver store, but a 200 tells Apple never to send a body again, so a 200 without a row is only for a
/// body that holds nothing worth keeping.
enum OverQuotaTreatment: Sendable, Equatable {
    /// Proven forged or malformed (no trusted key verified it: broken, a failed signature, an algorithm Apple does
    /// not use), or an exact retry of a postback already stored (its first sighting's row holds the same
    /// content): answered 200, counted in `postback_receiver_not_stored_total{reason="quota"}`, not stored.
    case discard
    /// Could still be genuine (``VerifiedPostback/couldStillBeGenuine``): answered 503 so that Apple sends it
    /// again, when the quota may have room, or after the kid was loaded or the policy changed.
    case retryLater
    /// A duplicate whose content differs from its first sighting's (rule D2: evidence of tampering on the way):
    /// a row keeping the content fingerprint and the members that differ, not the whole body.
    case keepDifferences

    /// The treatment of `postback` (an invalid verdict, after deduplication).
    init(_ postback: VerifiedPostback) {
        if postback.isDuplicate {
            self = postback.duplicateDifferences.map { $0.isEmpty } == false ? .keepDifferences : .discard
        } else {
            self = postback.couldStillBeGenuine ? .retryLater : .discard
        }
    }
}
