import AsyncCore
import Testing

/// Ending the iteration of `asyncStream()` unregisters the
/// observer, as ending a `CoreStream` loop does.
@Suite("asyncStream() unregistration", .hangDetector)
struct AsyncStreamTests {
  @Test("breaking out of a loop over a temporary asyncStream() unregisters the observer")
  func breakOutOfTemporaryStream() async throws {
    let core = makeCounterCore()
    for await count in await core.observe(\.count).asyncStream() {
      #expect(count == 0)
      break
    }
    #expect(core.metrics.observers == 0)
    try await core.dispatch(.increment)
    #expect(core.metrics.observers == 0)
  }

  @Test("a held asyncStream() ends its observer when released; break alone cannot be seen")
  func heldStreamEndsWhenReleased() async throws {
    let core = makeCounterCore()
    do {
      let counts = await core.observe(\.count).asyncStream()  // held beyond the loop on purpose
      #expect(core.metrics.observers == 1)
      for await count in counts {
        #expect(count == 0)
        break
      }
      // AsyncStream's iterators share the stream's storage, and a later loop
      // over `counts` may resume it: the standard library gives no signal
      // that this loop ended, so the observer stays until `counts` goes.
      // Documented on `asyncStream()`; this fails the day that changes.
      withKnownIssue("AsyncStream reports no end of a loop over a stream still held") {
        #expect(core.metrics.observers == 0)
      }
      withExtendedLifetime(counts) {}
    }
    #expect(core.metrics.observers == 0)
    try await core.dispatch(.increment)
    #expect(core.metrics.observers == 0)
  }
}
