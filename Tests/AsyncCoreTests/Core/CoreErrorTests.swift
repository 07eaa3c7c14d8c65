import AsyncCore
import Testing

/// What a `CoreError` prints: one sentence per case, as the package's other
/// errors do, never a bare case name.
@Suite("CoreError's descriptions", .hangDetector)
struct CoreErrorTests {
  static let sentences: [(CoreError, String)] = [
    (.shutDown, "the core has shut down and accepts no more actions"),
    (.alreadyRunning, "the core's run() is already in progress in another task"),
    (.childRemoved, "the child the handle points at is no longer in the state"),
  ]

  @Test("each case prints its sentence, through String(describing:), interpolation and any Error", arguments: sentences)
  func eachCasePrintsItsSentence(error: CoreError, sentence: String) {
    #expect(String(describing: error) == sentence)
    #expect("\(error)" == sentence)
    let existential: any Error = error
    #expect("\(existential)" == sentence)
  }

  @Test("the error a dispatch after shutdown throws prints its sentence")
  func thrownErrorPrintsItsSentence() async {
    let core = Core(initialState: 0, reducer: Reduce<Int, Int> { state, action in state += action })
    await core.shutdown()
    do {
      try await core.dispatch(1)
      Issue.record("a dispatch after shutdown was reduced")
    } catch {
      #expect("\(error)" == "the core has shut down and accepts no more actions")
    }
  }
}
