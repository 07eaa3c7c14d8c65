import AsyncCore
import Testing

/// Issue 7, item 7: ending the iteration of `asyncStream()` unregisters the
/// observer, as ending a `CoreStream` loop does.
@Suite("asyncStream() unregistration", .timeLimit(.minutes(1)))
struct AsyncStreamTests {
  @Test("breaking out of a loop over a temporary asyncStream() unregisters the observer")
  func breakOutOfTemporaryStream() async throws {
    let core = makeCounterCore()
    for await count in await core.observe(\.count).asyncStream() {
      #expect(count == 0)
      break
    }
    #expect(core.observerCount == 0)
    try await core.dispatch(.increment)
    #expect(core.observerCount == 0)
  }

  @Test("breaking out of a loop over a held asyncStream() unregisters the observer")
  func breakOutOfHeldStream() async throws {
    let core = makeCounterCore()
    let counts = await core.observe(\.count).asyncStream()  // held beyond the loop on purpose
    #expect(core.observerCount == 1)
    for await count in counts {
      #expect(count == 0)
      break
    }
    #expect(core.observerCount == 0)
    try await core.dispatch(.increment)
    #expect(core.observerCount == 0)
    withExtendedLifetime(counts) {}
  }
}
