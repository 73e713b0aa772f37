import Testing
@testable import SyncCore

/// The push of one change, step by step, from values only.
@Suite("PushPlan: the steps of one change's push")
struct PushPlanTests {
    func plan(_ operation: ChangeOperation = .update, base: String? = "1", versions: Bool = true,
              _ policy: ConflictPolicy = .manual, forced: Bool = false) -> PushPlan {
        PushPlan(operation: operation, baseVersion: base, comparesVersions: versions, policy: policy, forced: forced)
    }

    func found(_ version: String?, etag: String? = "\"e\"", holds: Bool = false, own: Bool = false) -> PushCheck {
        .found(status: 200, version: version, etag: etag, holdsTheChange: holds, ownWrite: own)
    }

    @Test func updatesAndRemovalsAreCheckedFirstWhenVersionsAreCompared() {
        #expect(plan(.update).first == .check)
        #expect(plan(.delete).first == .check)
        #expect(plan(.create, base: nil).first == .send(ifMatch: nil, rebase: false))
        #expect(plan(.update, versions: false).first == .send(ifMatch: nil, rebase: false))
        #expect(plan(.update, .clientWins).first == .send(ifMatch: nil, rebase: false))
        #expect(plan(.update, forced: true).first == .send(ifMatch: nil, rebase: false))
    }

    @Test func theSameVersionIsSentGuardedByItsETag() {
        #expect(plan().afterCheck(found("1"), listed: true) == .send(ifMatch: "\"e\"", rebase: false))
    }

    @Test func anotherVersionIsAConflictNamingBoth() {
        #expect(plan().afterCheck(found("2"), listed: true)
                == .conflict(reason: "the server's version is 2, the change was made against 1", status: nil))
    }

    @Test func anotherVersionFromTheEnginesOwnPushIsSentAgainstIt() {
        #expect(plan(.update).afterCheck(found("2", own: true), listed: true) == .send(ifMatch: "\"e\"", rebase: true))
        #expect(plan(.delete).afterCheck(found("2", own: true), listed: true) == .send(ifMatch: "\"e\"", rebase: false))
    }

    @Test func aServerHoldingTheChangeSettlesIt() {
        #expect(plan().afterCheck(found("2", holds: true), listed: true)
                == .settle(reason: "is on the server already (an earlier push landed); nothing sent"))
    }

    @Test func aChangeOfARecordWhoseCreateWasStillOutIsRebasedNotAConflict() {
        #expect(plan(.update, base: nil).afterCheck(found("5"), listed: true) == .send(ifMatch: "\"e\"", rebase: true))
    }

    @Test func aServerCopyWithoutAVersionParksTheChange() {
        #expect(plan().afterCheck(found(nil), listed: true) == .parkUnreadable(status: 200, reason: nil))
        #expect(plan().afterCheck(.unreadable(status: 200, reason: "not JSON"), listed: true)
                == .parkUnreadable(status: 200, reason: "not JSON"))
    }

    @Test func aMissingRecordWaitsForTheListingIsAlreadyRemovedOrConflicts() {
        #expect(plan(.update).afterCheck(.missing, listed: true) == .awaitListing)
        #expect(plan(.delete).afterCheck(.missing, listed: false) == .settle(reason: "already removed on the server"))
        #expect(plan(.update).afterCheck(.missing, listed: false) == .conflict(reason: "the server removed it", status: nil))
    }

    @Test func aRefusedCheckParks() {
        #expect(plan().afterCheck(.refused(status: 405), listed: true) == .park(status: 405))
    }

    @Test func pushingTheLocalVersionOverAConflictRebasesItUnlessTheRecordIsGone() {
        #expect(plan().afterPushingLocal(over: found("2")) == .send(ifMatch: nil, rebase: true))
        #expect(plan().afterPushingLocal(over: .missing) == .send(ifMatch: nil, rebase: false))
    }

    @Test("the answer to a write", arguments: [
        (201, PushStep.done), (204, .done), (303, .parkSeeOther), (401, .stopForCredentials(status: 401)),
        (403, .stopForCredentials(status: 403)), (409, .conflict(reason: "", status: 409)), (412, .conflict(reason: "", status: 412)),
        (400, .park(status: 400)), (422, .park(status: 422)), (500, .retryLater(status: 500)), (503, .retryLater(status: 503)),
        (429, .retryLater(status: 429)),
    ])
    func answers(status: Int, step: PushStep) {
        #expect(plan().afterAnswer(status: status, listed: false) == step)
    }

    @Test func aForcedWriteRefusedAgainIsParked() {
        #expect(plan(forced: true).afterAnswer(status: 409, listed: true) == .park(status: 409))
    }

    @Test func notFoundForAWriteDependsOnTheListingAndTheOperation() {
        #expect(plan(.update).afterAnswer(status: 404, listed: true) == .awaitListing)
        #expect(plan(.update).afterAnswer(status: 404, listed: false) == .park(status: 404))
        #expect(plan(.delete).afterAnswer(status: 404, listed: false) == .settle(reason: "already removed on the server (HTTP 404)"))
        #expect(plan(.create, base: nil).afterAnswer(status: 404, listed: true) == .park(status: 404))
    }

    @Test func noAnswerLeavesOnlyACreateThatWentOutUnknown() {
        #expect(plan(.create, base: nil).afterNoAnswer(neverSent: false) == .createOutcomeUnknown)
        #expect(plan(.create, base: nil).afterNoAnswer(neverSent: true) == .retryLater(status: nil))
        #expect(plan(.update).afterNoAnswer(neverSent: false) == .retryLater(status: nil))
    }

    @Test func holdsComparesEveryMemberButTheVersion() {
        let mine: JSONObject = ["id": "a", "n": 1, "version": 1]
        #expect(PushPlan.holds(mine, in: ["id": "a", "n": 1, "version": 2, "stamp": "x"], versionField: "version"))
        #expect(!PushPlan.holds(mine, in: ["id": "a", "n": 2, "version": 2], versionField: "version"))
        #expect(!PushPlan.holds(mine, in: ["id": "a", "n": 1, "version": 2], versionField: nil))
    }
}

@Suite("ConflictPolicy: the verdict on a conflicting change")
struct ConflictVerdictTests {
    @Test func eachPolicy() {
        #expect(ConflictPolicy.serverWins.verdict(changedAt: "2026-01-01T00:00:00Z", remoteVersion: "3", versionField: "v")
                == .discard(why: "ConflictPolicy=server-wins"))
        #expect(ConflictPolicy.clientWins.verdict(changedAt: "2026-01-01T00:00:00Z", remoteVersion: "3", versionField: "v") == .pushLocal)
        #expect(ConflictPolicy.manual.verdict(changedAt: "2026-01-01T00:00:00Z", remoteVersion: "3", versionField: "v") == .keepBoth)
    }

    @Test func lastWriteWinsComparesTimes() {
        let policy = ConflictPolicy.lastWriteWins
        #expect(policy.verdict(changedAt: "2026-02-01T00:00:00Z", remoteVersion: "2026-01-01T00:00:00Z", versionField: "updated") == .pushLocal)
        #expect(policy.verdict(changedAt: "2026-01-01T00:00:00Z", remoteVersion: "2026-02-01T00:00:00Z", versionField: "updated")
                == .discard(why: "the server's version is newer"))
        // Equal times: the server's stands.
        #expect(policy.verdict(changedAt: "2026-01-01T00:00:00Z", remoteVersion: "2026-01-01T00:00:00Z", versionField: "updated")
                == .discard(why: "the server's version is newer"))
        #expect(policy.verdict(changedAt: "2026-01-01T00:00:00Z", remoteVersion: "17", versionField: "updated")
                == .discard(why: "the server's updated is not a time"))
    }
}

@Suite("PushRound: which changes go out and when a push stops")
struct PushRoundTests {
    let a = RecordID("a"), b = RecordID("b")

    @Test func aParkedOrConflictingChangeHoldsBackItsRecordsLaterChanges() {
        var round = PushRound()
        let r1 = round.sends(recordID: a, state: .parked, superseded: false, answerLost: false)
        #expect(!r1)
        let r2 = round.sends(recordID: a, state: .queued, superseded: false, answerLost: false)
        #expect(!r2)
        let r3 = round.sends(recordID: b, state: .queued, superseded: false, answerLost: false)
        #expect(r3)
        let r4 = round.sends(recordID: b, state: .conflict, superseded: false, answerLost: false)
        #expect(!r4)
        let r5 = round.sends(recordID: b, state: .queued, superseded: false, answerLost: false)
        #expect(!r5)
    }

    @Test func aSupersededParkedChangeDoesNotHoldBackTheNewerOne() {
        var round = PushRound()
        let r6 = round.sends(recordID: a, state: .parked, superseded: true, answerLost: false)
        #expect(!r6)
        let r7 = round.sends(recordID: a, state: .queued, superseded: false, answerLost: false)
        #expect(r7)
    }

    @Test func aCreateWhoseAnswerWasLostIsHeldBackWithItsRecord() {
        var round = PushRound()
        let r8 = round.sends(recordID: a, state: .queued, superseded: false, answerLost: true)
        #expect(!r8)
        let r9 = round.sends(recordID: a, state: .queued, superseded: false, answerLost: false)
        #expect(!r9)
        let r10 = round.sends(recordID: b, state: .sent, superseded: false, answerLost: false)
        #expect(!r10)
    }

    @Test func threeRecordFailuresInARowFailTheRound() {
        var round = PushRound()
        let r11 = round.after(.recordTrouble, recordID: RecordID("1"))
        #expect(r11 == .goOn)
        let r12 = round.after(.recordTrouble, recordID: RecordID("2"))
        #expect(r12 == .goOn)
        let r13 = round.after(.recordTrouble, recordID: RecordID("3"))
        #expect(r13 == .fail)
    }

    @Test func aSuccessInBetweenResetsTheCount() {
        var round = PushRound()
        _ = round.after(.recordTrouble, recordID: RecordID("1"))
        _ = round.after(.recordTrouble, recordID: RecordID("2"))
        let r14 = round.after(.finished, recordID: RecordID("3"))
        #expect(r14 == .goOn)
        let r15 = round.after(.recordTrouble, recordID: RecordID("4"))
        #expect(r15 == .goOn)
        #expect(round.hadRecordFailure)
    }

    @Test func aFailedRecordsLaterChangesWait() {
        var round = PushRound()
        _ = round.after(.recordTrouble, recordID: a)
        let r16 = round.sends(recordID: a, state: .queued, superseded: false, answerLost: false)
        #expect(!r16)
        _ = round.after(.awaitingListing, recordID: b)
        let r17 = round.sends(recordID: b, state: .queued, superseded: false, answerLost: false)
        #expect(!r17)
    }

    @Test func credentialsAndUnknownCreatesStopTheRoundButTheListingIsPulled() {
        var round = PushRound()
        let r18 = round.after(.credentialsRefused, recordID: a) == .stopAndPull(failing: true)
        #expect(r18)
        var other = PushRound()
        let r19 = other.after(.createOutcomeUnknown, recordID: a) == .stopAndPull(failing: true)
        #expect(r19)
        var afterTrouble = PushRound()
        _ = afterTrouble.after(.recordTrouble, recordID: b)
        // The round's failure stays the first record's.
        let r20 = afterTrouble.after(.createOutcomeUnknown, recordID: a) == .stopAndPull(failing: false)
        #expect(r20)
    }

    @Test func anyOtherFailureFailsTheRound() {
        var round = PushRound()
        let r21 = round.after(.failed, recordID: a)
        #expect(r21 == .fail)
    }
}
