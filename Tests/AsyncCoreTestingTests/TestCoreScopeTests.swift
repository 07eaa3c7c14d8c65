import AsyncCore
import AsyncCoreTesting
import Testing

/// A child feature driven through `TestCore.scope`, checked as the parent.
@Suite("TestCore.Scope", .timeLimit(.minutes(5)))
struct TestCoreScopeTests {
  let fixture = Fixture()

  @Test("a scope sends a child's actions and receives what its effects send, with closures on the child's state")
  func scope() async {
    let store = fixture.makeStore()
    let form = store.scope(state: \.form, action: Event.formCase)
    await form.send(.rename("Ada")) { $0.name = "Ada" }
    #expect(form.state.name == "Ada")
    await form.send(.submit) {
      #expect(form.state.isLoading == false)  // the state before, as in a send
      $0.isLoading = true
    }
    await form.receive(.submitted) { $0.isLoading = false }
    await store.send(.increment) { $0.count = 1 }  // the parent, in between
    // A child action that changes the parent too is asserted on the parent.
    await store.send(.form(.clear)) {
      $0.form.name = ""
      $0.note = "cleared"
    }
    await store.finish()
  }

  @Test("a scope of a scope sends through both")
  func scopeOfAScope() async {
    let store = TestCore(initialState: Model(), reducer: fixture.reduce)
    let name = store.scope(state: \.self, action: ActionCase(embed: { $0 }, extract: { $0 })).scope(
      state: \.form, action: Event.formCase)
    await name.send(.rename("Ada")) { $0.name = "Ada" }
    #expect(store.state.form.name == "Ada")
  }

  @Test("a scope's send is checked as the parent's: the whole state, with the parent's paths and action")
  func scopeChecksTheParent() async {
    let store = fixture.makeStore()
    let form = store.scope(state: \.form, action: Event.formCase)
    var lines: [Int] = []
    await expectIssues([
      ExpectedIssue(
        .stateMismatch(
          step: "send(.form(.rename(\"Ada\")))",
          differences: [StateDifference(path: "form.name", expected: "\"Bob\"", actual: "\"Ada\"")]),
        line: lines[0]),
      ExpectedIssue(
        .stateMismatch(
          step: "send(.form(.clear))",
          differences: [StateDifference(path: "note", expected: "nil", actual: "\"cleared\"")]),
        line: lines[1]),
    ]) {
      lines.append(#line + 1)
      await form.send(.rename("Ada")) { $0.name = "Bob" }
      lines.append(#line + 1)
      await form.send(.clear) { $0.name = "" }  // the parent's note changed too
    }
    await store.finish()
  }
}
