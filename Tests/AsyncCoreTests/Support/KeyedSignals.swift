// `Locked`, AsyncCore's mutex that ThreadSanitizer can see on Linux (see
// Recorders.swift).
@testable import AsyncCore

/// One-shot signals by key: a task raises `key` with a value once, others
/// await it. For tests that wait on a specific event (this effect started,
/// that one ended) instead of sleeping.
///
/// ```swift
/// let ended = Signals<Int, Bool>()
/// // in the effect:  ended.raise(token, true)
/// let fired = await ended.wait(for: token)  // nil only if the waiting task was cancelled
/// ```
final class Signals<Key: Hashable & Sendable, Value: Sendable>: Sendable {
  private struct State {
    var raised: [Key: Value] = [:]
    var nextWaiter = 0
    var waiters: [Key: [Int: CheckedContinuation<Value?, Never>]] = [:]
  }

  private let state = Locked(State())

  /// Raises `key` with `value` and wakes its waiters. A key is raised once;
  /// raising it again keeps the first value.
  func raise(_ key: Key, _ value: Value) {
    let (kept, waiters) = state.withLock { state -> (Value, [CheckedContinuation<Value?, Never>]) in
      if let first = state.raised[key] { return (first, []) }
      state.raised[key] = value
      let waiters = state.waiters.removeValue(forKey: key) ?? [:]
      return (value, Array(waiters.values))
    }
    for waiter in waiters { waiter.resume(returning: kept) }
  }

  /// The value `key` was raised with, or `nil` if it was not raised yet.
  func value(of key: Key) -> Value? {
    state.withLock { $0.raised[key] }
  }

  /// Waits until `key` is raised and returns its value; returns `nil` early
  /// if the waiting task is cancelled (a test's time limit ends the wait).
  func wait(for key: Key) async -> Value? {
    let id = state.withLock { state -> Int in
      state.nextWaiter += 1
      return state.nextWaiter
    }
    return await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Value?, Never>) in
        let answer = state.withLock { state -> Value?? in
          if let value = state.raised[key] { return .some(value) }
          if Task.isCancelled { return .some(nil) }
          state.waiters[key, default: [:]][id] = continuation
          return nil
        }
        if let answer { continuation.resume(returning: answer) }
      }
    } onCancel: {
      let waiter = state.withLock { state -> CheckedContinuation<Value?, Never>? in
        let waiter = state.waiters[key]?.removeValue(forKey: id)
        if state.waiters[key]?.isEmpty == true { state.waiters[key] = nil }
        return waiter
      }
      waiter?.resume(returning: nil)
    }
  }
}
