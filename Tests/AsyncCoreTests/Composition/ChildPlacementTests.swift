import AsyncCoreTesting
import Testing

@testable import AsyncCore

/// How composed reducers reach their children: a key path of stored
/// properties is followed by its offset, any other (a computed property)
/// as a key path; and `forEach`'s check for removed ids, which skips the
/// list when the parent did not write to it.
@Suite("Composed reducers reach their children", .hangDetector)
struct ChildPlacementTests {
  /// Panels behind stored and computed properties, and a child of no size.
  struct Shelf: Sendable, Equatable {
    var stored: [Panel] = [Panel(id: 1), Panel(id: 2)]
    var computed: [Panel] {
      get { stored }
      set { stored = newValue }
    }
    var detail: Panel? = Panel(id: 7)
    var computedDetail: Panel? {
      get { detail }
      set { detail = newValue }
    }
    var marker = Marker()
    var marks = 0
  }

  struct Marker: Sendable, Equatable {}

  enum ShelfAction: Sendable, Equatable {
    case row(id: Int, action: PanelAction)
    case detail(PanelAction)
    case marker
    case marked
    /// Puts panels with `ids` in place of the list, in one write.
    case replaceRows([Int])
    /// Writes to a row without changing any id.
    case touchRows
    case hideDetail

    static let rowCase = ActionCase(embed: ShelfAction.row) {
      if case .row(let id, let action) = $0 { (id, action) } else { nil }
    }
    static let detailCase = ActionCase(embed: ShelfAction.detail) {
      if case .detail(let action) = $0 { action } else { nil }
    }
  }

  static let logic = Reduce<Shelf, ShelfAction> { state, action in
    switch action {
    case .replaceRows(let ids): state.stored = ids.map { Panel(id: $0) }
    case .touchRows: state.stored[0].title += "!"
    case .hideDetail: state.detail = nil
    case .marked: state.marks += 1
    case .row, .detail, .marker: break
    }
  }

  /// A core whose panels are placed through `rows` and `detail`, stored or
  /// computed key paths to the same panels.
  static func makeCore(
    rows: WritableKeyPath<Shelf, [Panel]> & Sendable,
    detail: WritableKeyPath<Shelf, Panel?> & Sendable,
    clock: ManualClock,
    diagnostics: Events<EffectFailure>
  ) -> Core<Shelf, ShelfAction> {
    let marker = Reduce<Marker, Void> { _, _ in .send(()) }
    let reducer = Reduce<Shelf, ShelfAction>.combine([
      .scope(
        state: \.marker,
        action: ActionCase(embed: { (_: Void) in ShelfAction.marked }) { if case .marker = $0 { () } else { nil } },
        child: marker),
      logic
        .forEach(rows, action: ShelfAction.rowCase, element: PanelFeature.reducer)
        .ifLet(detail, action: ShelfAction.detailCase, then: PanelFeature.reducer),
    ])
    return Core(initialState: Shelf(), clock: clock, diagnostics: { diagnostics.record($0) }, reducer: reducer)
  }

  static let placements:
    [(rows: WritableKeyPath<Shelf, [Panel]> & Sendable, detail: WritableKeyPath<Shelf, Panel?> & Sendable)] = [
      (\.stored, \.detail), (\.computed, \.computedDetail),
    ]

  @Test("children behind stored and computed key paths reduce their actions", arguments: placements)
  func reachesChildren(
    rows: WritableKeyPath<Shelf, [Panel]> & Sendable, detail: WritableKeyPath<Shelf, Panel?> & Sendable
  ) async throws {
    let diagnostics = Events<EffectFailure>()
    let core = Self.makeCore(rows: rows, detail: detail, clock: ManualClock(), diagnostics: diagnostics)
    try await core.dispatch(.row(id: 2, action: .increment))
    try await core.dispatch(.row(id: 2, action: .setTitle("two")))
    try await core.dispatch(.detail(.increment))
    try await core.dispatch(.row(id: 9, action: .increment))
    let state = await core.state
    #expect(state.stored == [Panel(id: 1), Panel(id: 2, count: 1, title: "two")])
    #expect(state.detail == Panel(id: 7, count: 1))
    #expect(diagnostics.all.map { "\($0.error)" }.contains { $0.contains("[id: 9]") })
    #expect(diagnostics.all.count == 1)
  }

  @Test("a child of no size is reached, and its effects lifted")
  func zeroSizedChild() async throws {
    let core = Self.makeCore(
      rows: \.stored, detail: \.detail, clock: ManualClock(), diagnostics: Events())
    try await core.dispatch(.marker)
    try await core.dispatch(.marker)
    try await core.waitUntilIdle()
    #expect(await core.state.marks == 2)
  }

  @Test(
    "a list replaced by one of the same size with other ids ends the elements that left", arguments: placements)
  func sameCountOtherIDs(
    rows: WritableKeyPath<Shelf, [Panel]> & Sendable, detail: WritableKeyPath<Shelf, Panel?> & Sendable
  ) async throws {
    let clock = ManualClock()
    let diagnostics = Events<EffectFailure>()
    let core = Self.makeCore(rows: rows, detail: detail, clock: clock, diagnostics: diagnostics)
    try await core.dispatch(.row(id: 1, action: .load("one")))
    try await core.dispatch(.row(id: 2, action: .load("two")))
    try await clock.waitForSleepers(atLeast: 2)
    try await core.dispatch(.replaceRows([2, 3]))  // 1 leaves, 3 comes: still two rows
    await clock.advance(by: .seconds(1))
    try await core.waitUntilIdle()
    // Row 1's load was cancelled (else its `.loaded` would be reported as
    // for a missing child); row 2, which stayed, loaded.
    #expect(await core.state.stored.map(\.loaded) == [["two"], []])
    #expect(diagnostics.all.isEmpty)
  }

  @Test("a write to the list that keeps every id ends no element")
  func writeKeepingIDs() async throws {
    let clock = ManualClock()
    let core = Self.makeCore(rows: \.stored, detail: \.detail, clock: clock, diagnostics: Events())
    try await core.dispatch(.row(id: 1, action: .load("one")))
    try await clock.waitForSleepers(atLeast: 1)
    try await core.dispatch(.touchRows)
    try await core.dispatch(.replaceRows([1, 2]))  // new values, the same ids
    await clock.advance(by: .seconds(1))
    try await core.waitUntilIdle()
    #expect(await core.state.stored.map(\.loaded) == [["one"], []])
  }

  @Test("an optional child behind a computed key path ends when it becomes nil")
  func computedOptionalEnds() async throws {
    let clock = ManualClock()
    let diagnostics = Events<EffectFailure>()
    let core = Self.makeCore(rows: \.computed, detail: \.computedDetail, clock: clock, diagnostics: diagnostics)
    try await core.dispatch(.detail(.load("d")))
    try await clock.waitForSleepers(atLeast: 1)
    try await core.dispatch(.hideDetail)
    await clock.advance(by: .seconds(1))
    try await core.waitUntilIdle()
    #expect(await core.state.detail == nil)
    #expect(diagnostics.all.isEmpty)
  }
}
