import Foundation

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// The stores' tests count through a ``ClaimLedger``: claim, run the step, confirm (or release when it throws). A
/// ledger per call, since these tests hold no claim between calls. Unlike ``PostbackPipeline``'s `count`, it claims
/// without `claimForStoring` and `reaffirm`: the stores' tests hold no lease across a lapse (the pipeline's own tests
/// and `CountFailureTests` cover those steps).
extension DeduplicationStore {
    /// Claims `sightings` at `time` through a new ledger over this store, runs `store` with the answers, then
    /// confirms the first sightings; releases them and rethrows when `store` throws.
    func claimAndConfirm<Outcome>(
        _ sightings: [PostbackSighting], at time: Date, store: ([DeduplicationAnswer]) throws -> Outcome
    ) throws -> Outcome {
        let ledger = ClaimLedger(store: self)
        let answers = try ledger.claim(sightings, at: time)
        let claimed = Self.claimedKeys(sightings, answers)
        let outcome: Outcome
        do {
            outcome = try store(answers)
        } catch {
            ledger.release(claimed)
            throw error
        }
        ledger.stored(claimed)
        try ledger.confirmStored()
        return outcome
    }

    /// `claimAndConfirm(_:at:store:)` with an async step, the ledger's calls on the stores' dispatch queue.
    func claimAndConfirm<Outcome>(
        _ sightings: [PostbackSighting], at time: Date, store: ([DeduplicationAnswer]) async throws -> Outcome
    ) async throws -> Outcome {
        let ledger = ClaimLedger(store: self)
        let answers = try await BlockingStoreCall.run { try ledger.claim(sightings, at: time) }
        let claimed = Self.claimedKeys(sightings, answers)
        let outcome: Outcome
        do {
            outcome = try await store(answers)
        } catch {
            try? await BlockingStoreCall.run { ledger.release(claimed) }
            throw error
        }
        try await BlockingStoreCall.run {
            ledger.stored(claimed)
            try ledger.confirmStored()
        }
        return outcome
    }

    /// One sighting claimed and confirmed at once.
    func claimAndConfirm(_ sighting: PostbackSighting, at time: Date = Date()) throws -> DeduplicationAnswer {
        try claimAndConfirm([sighting], at: time) { $0[0] }
    }
}
