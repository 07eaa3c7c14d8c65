import AsyncCore
import Testing

/// Where a test core that goes away outside its test records what it left:
/// a task started in that test, parked until the test core goes away.
///
/// Swift Testing attributes an issue through task-local values, which a
/// task that outlived the test lacks; this task inherits them from the test,
/// so the issues are that test's, recorded once.
struct LeftoverReporter: Sendable {
  /// One issue to record.
  struct Report: Sendable {
    let message: String
    let sourceLocation: SourceLocation?
  }

  private let mailbox: LeftoverMailbox
  /// The task that records; a test of the testing library awaits it.
  let task: Task<Void, Never>

  /// Starts the reporting task in the current task's context: call it in
  /// the test that makes the test core.
  init() {
    let mailbox = LeftoverMailbox()
    self.mailbox = mailbox
    task = Task {
      for report in await mailbox.take() {
        if let sourceLocation = report.sourceLocation {
          Issue.record(Comment(rawValue: report.message), sourceLocation: sourceLocation)
        } else {
          Issue.record(Comment(rawValue: report.message))
        }
      }
    }
  }

  /// Hands `reports` to the task, which records them and ends; an empty
  /// list just ends it. Called once, when the test core goes away.
  func deliver(_ reports: [Report]) {
    mailbox.deliver(reports)
  }
}

/// The hand-over between a test core's `deinit` and its reporting task:
/// runs ``LeftoverMailboxStateMachine`` under a lock.
final class LeftoverMailbox: Sendable {
  private let machine = Locked(
    LeftoverMailboxStateMachine<CheckedContinuation<[LeftoverReporter.Report], Never>>())

  func take() async -> [LeftoverReporter.Report] {
    await withCheckedContinuation { continuation in
      if let reports = machine.withLock({ $0.take(continuation) }) {
        continuation.resume(returning: reports)
      }
    }
  }

  func deliver(_ reports: [LeftoverReporter.Report]) {
    machine.withLock { $0.deliver(reports) }?.resume(returning: reports)
  }
}

/// Whichever comes first, the reporting task parking or the reports, waits
/// for the other. Pure: the mailbox resumes the `Waiter` (the task's
/// continuation) it returns.
struct LeftoverMailboxStateMachine<Waiter> {
  typealias Reports = [LeftoverReporter.Report]

  private enum State {
    case empty
    case parked(Waiter)
    case delivered(Reports)
    case done
  }

  private var state = State.empty

  /// The task asks for the reports: returns them if they are here already,
  /// else parks it (`nil`).
  mutating func take(_ waiter: Waiter) -> Reports? {
    switch state {
    case .empty:
      state = .parked(waiter)
      return nil
    case .delivered(let reports):
      state = .done
      return reports
    case .parked, .done:
      fatalError("AsyncCoreTesting: internal: a test core's leftovers were taken twice")
    }
  }

  /// The reports arrive: the parked task to resume with them, if it has
  /// parked already (else they wait for it).
  mutating func deliver(_ reports: Reports) -> Waiter? {
    switch state {
    case .empty:
      state = .delivered(reports)
      return nil
    case .parked(let waiter):
      state = .done
      return waiter
    case .delivered, .done:
      fatalError("AsyncCoreTesting: internal: a test core's leftovers were delivered twice")
    }
  }
}
