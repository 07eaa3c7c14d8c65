import AsyncCoreTesting

@testable import AsyncCore

/// A small feature placed several times in `Board`: a count, a title, and
/// loads that sleep a second on the clock under the cancel id `"load"`.
struct Panel: Sendable, Equatable, Identifiable {
  var id = 0
  var count = 0
  var title = ""
  var loaded: [String] = []
}

enum PanelAction: Sendable, Equatable {
  case increment
  case setTitle(String)
  /// Sleeps one second on the clock, then sends `.loaded(tag)`; cancel id
  /// `"load"`.
  case load(String)
  case loaded(String)
  case cancelLoad
  /// Sends `.loaded` with the `prefix` dependency the effect sees.
  case readPrefix
}

enum PanelFeature {
  static let reducer = Reduce<Panel, PanelAction> { state, action in
    switch action {
    case .increment:
      state.count += 1
      return .none
    case .setTitle(let title):
      state.title = title
      return .none
    case .load(let tag):
      return .run { send in
        try await send.clock.sleep(for: .seconds(1))
        await send(.loaded(tag))
      }
      .cancellable(id: "load")
    case .loaded(let tag):
      state.loaded.append(tag)
      return .none
    case .cancelLoad:
      return .cancel(id: "load")
    case .readPrefix:
      return .run { send in await send(.loaded(send.dependencies.prefix)) }
    }
  }
}

/// A parent of panels in every way a child can be placed: two fixed ones
/// (the right one with its own `prefix`), an optional one (with `prefix`
/// removed), and a list.
struct Board: Sendable, Equatable {
  var left = Panel()
  var right = Panel()
  var detail: Panel?
  var rows: [Panel] = []
  var notes: [String] = []
}

enum BoardAction: Sendable, Equatable {
  case left(PanelAction)
  case right(PanelAction)
  case detail(PanelAction)
  case row(id: Int, action: PanelAction)
  case showDetail
  /// Puts another detail (of id `id`) in place of the one shown.
  case replaceDetail(Int)
  case hideDetail
  case addRow(Int)
  case removeRow(Int)
  case note(String)
  /// The parent's own effect under the cancel id `"load"`, as the panels'.
  case parentLoad
  case parentCancelLoad

  static let leftCase = ActionCase(embed: BoardAction.left) { if case .left(let action) = $0 { action } else { nil } }
  static let rightCase = ActionCase(embed: BoardAction.right) {
    if case .right(let action) = $0 { action } else { nil }
  }
  static let detailCase = ActionCase(embed: BoardAction.detail) {
    if case .detail(let action) = $0 { action } else { nil }
  }
  static let rowCase = ActionCase(embed: BoardAction.row) {
    if case .row(let id, let action) = $0 { (id, action) } else { nil }
  }
}

enum BoardFeature {
  static let logic = Reduce<Board, BoardAction> { state, action in
    switch action {
    case .showDetail:
      state.detail = Panel(id: 100)
    case .replaceDetail(let id):
      state.detail = Panel(id: id)
    case .hideDetail:
      state.detail = nil
    case .addRow(let id):
      state.rows.append(Panel(id: id))
    case .removeRow(let id):
      state.rows.removeAll { $0.id == id }
    case .note(let note):
      state.notes.append(note)
    case .parentLoad:
      return .run { send in
        try await send.clock.sleep(for: .seconds(1))
        await send(.note("parent loaded"))
      }
      .cancellable(id: "load")
    case .parentCancelLoad:
      return .cancel(id: "load")
    case .left, .right, .detail, .row:
      break
    }
    return .none
  }

  static let reducer = Reduce<Board, BoardAction>.combine([
    .scope(state: \.left, action: BoardAction.leftCase, child: PanelFeature.reducer),
    .scope(
      state: \.right, action: BoardAction.rightCase, dependencies: { $0.prefix = "right" },
      child: PanelFeature.reducer),
    logic
      .ifLet(
        \.detail, action: BoardAction.detailCase, dependencies: { $0.remove(PrefixKey.self) },
        then: PanelFeature.reducer
      )
      .forEach(\.rows, action: BoardAction.rowCase, element: PanelFeature.reducer),
  ])

  static func makeCore(
    _ initialState: Board = Board(),
    clock: ManualClock = ManualClock(),
    mailboxCapacity: Int? = nil,
    diagnostics: Events<EffectFailure> = Events()
  ) -> Core<Board, BoardAction> {
    Core(
      initialState: initialState, dependencies: Dependencies { $0.prefix = "core" }, clock: clock,
      mailboxCapacity: mailboxCapacity, diagnostics: { diagnostics.record($0) }, reducer: reducer)
  }
}

extension Core {
  /// How many key-path groups the core publishes to: observers of one key
  /// path, through the core or a handle, share one.
  var keyPathGroupCount: Int { observers.groupsByKey.count }

  /// How many children the core looks up after each action, for the
  /// handles on them.
  var watchedChildCount: Int { scopeBook?.watchChecks.count ?? 0 }
}
