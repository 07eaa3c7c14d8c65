import AsyncCore

// Every use of an AsyncCore API that another branch changes goes through
// this file, so merging that branch is a change here only.

/// Waits until everything `handle` covers has finished, or the waiting task
/// is cancelled; returns whether it finished.
///
/// PENDING(i9-core): `EffectHandle.finish()` becomes
/// `async throws(CancellationError)`. Then:
///
///     do { try await handle.finish() } catch { return false }
///     return true
func waitForEffects(of handle: EffectHandle) async -> Bool {
  await handle.finish()
  return handle.isFinished
}

// PENDING(i9-core): `Dependencies`. When `Core(initialState:dependencies:…)`
// and `Core.updateDependencies(_:)` land, `TestCore` gains, in TestCore.swift:
//
//   - a `dependencies: Dependencies = Dependencies()` parameter on both
//     initializers, passed on to the inner `Core`;
//   - `public func updateDependencies(_ update: …) async`, forwarding to
//     `await core.updateDependencies(update)`.
//
// `Core.effectsInFlight` is not needed: the test core keeps the handle of
// every `send`, which says which `send` an effect still running came from.
