import AsyncCore

/// Every action the test core's reducer ran, in order, and the errors its
/// effects threw: written inside the core, read by the test.
///
/// The reducer appends synchronously, so what `dispatch` or a finished
/// effect handle covers is here when it returns.
final class ActionLog<State: Sendable, Action: Sendable>: Sendable {
  private struct Storage {
    var records: [Record<State, Action>] = []
    var failures: [EffectFailure] = []
    var nextWaiter = 0
    var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
  }

  private let storage = Locked(Storage())

  func append(_ record: Record<State, Action>) {
    let waiters = storage.withLock { storage in
      storage.records.append(record)
      defer { storage.waiters = [:] }
      return Array(storage.waiters.values)
    }
    for waiter in waiters { waiter.resume() }
  }

  func append(_ failure: EffectFailure) {
    storage.withLock { $0.failures.append(failure) }
  }

  /// The records from `index` on.
  func records(from index: Int) -> [Record<State, Action>] {
    storage.withLock { storage in
      index < storage.records.count ? Array(storage.records[index...]) : []
    }
  }

  /// The effect failures not taken yet.
  func takeFailures() -> [EffectFailure] {
    storage.withLock { storage in
      defer { storage.failures = [] }
      return storage.failures
    }
  }

  /// Returns once the log holds more than `count` records, or the task is
  /// cancelled.
  func waitForRecord(beyond count: Int) async {
    let id = storage.withLock { storage in
      storage.nextWaiter += 1
      return storage.nextWaiter
    }
    await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        // Checked under the lock `onCancel` takes too: a cancellation either
        // came first (the flag is set) or will find the waiter.
        let parked = storage.withLock { storage in
          guard storage.records.count <= count, !Task.isCancelled else { return false }
          storage.waiters[id] = continuation
          return true
        }
        if !parked { continuation.resume() }
      }
    } onCancel: {
      storage.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
    }
  }
}
