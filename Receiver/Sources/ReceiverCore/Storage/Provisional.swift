import Attribution
import Foundation

// PROVISIONAL until the stores branch's claim/confirm API is merged.
extension VerificationResult {
    var deduplicationKeyBytes: [UInt8]? { deduplicationKey.map { Array($0.utf8) } }
    mutating func markDuplicate(of first: DuplicateReference) {}
}

struct SQLiteReceiverDeduplication: ReceiverDeduplication {
    let store: SQLiteDeduplicationStore
    init(path: String, retentionDays: Int) async throws {
        store = try SQLiteDeduplicationStore(path: path, retentionDays: retentionDays)
    }
    func claim(_ sightings: [PostbackSighting], at time: Date) async throws -> DeduplicationClaim {
        let answers = try store.deduplicate(sightings, at: time) { $0 }
        return DeduplicationClaim(answers: answers, token: 0)
    }
    func confirm(_ claim: DeduplicationClaim) async throws {}
    func release(_ claim: DeduplicationClaim) async {}
}
