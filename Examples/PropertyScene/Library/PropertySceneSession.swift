import AsyncCore
import AsyncCoreExampleSupport
import AsyncCorePropertySearchExample

/// Runs the property scene over lines typed at its prompt: the display
/// and the navigator subscribe to the core, and each line is a view event
/// (``PropertySceneInput``).
///
/// ```swift
/// let scene = Core(
///   initialState: PropertyLogic(propertyID: 42), dependencies: workers, reducer: PropertyLogic.reducer)
/// let session = PropertySceneSession(core: scene, isInteractive: false) { print($0, terminator: "") }
/// let final = await session.run(lines: standardInputLines)
/// ```
///
/// The presenter runs inside the core, as the display's selector, and the
/// navigator's selector is the route: each is called only when what it
/// reads changed, before `dispatch` returns. `back` to the property writes
/// the navigator's line, then the property's screen again. The session sends
/// ``PropertyLogicAction/onAppear`` first, and waits for each request's
/// answer before the next line, so piped input is taken in order; a `q`
/// typed meanwhile, and the end of the lines, are read once the answer has
/// come.
///
/// A line is read against the screen shown (``PropertySceneInput``): a
/// command of a screen the navigator covered is refused. Every command
/// gets a visible answer: what it drew, or, when it drew nothing, a line
/// saying why (``unchanged(_:)``): the same mistake twice prints its error
/// twice.
///
/// The session ends at `q`, at the end of the lines, when the logic
/// closes the scene (`back` from the property), or when its task is
/// cancelled (Ctrl-C, through ``Interrupt/runSession(ending:_:)``), at once
/// even while a request runs: it shuts the core down with
/// ``ShutdownMode/immediate``, cancelling a request still running, and
/// writes ``farewell(_:)``.
public struct PropertySceneSession: Sendable {
  /// The scene's core; shut down when the session ends.
  public let core: Core<PropertyLogic, PropertyLogicAction>
  /// Whether a person types at a terminal: the prompt is drawn, and lines
  /// are not echoed (the terminal showed them).
  public let isInteractive: Bool
  private let write: @Sendable (String) -> Void

  public init(
    core: Core<PropertyLogic, PropertyLogicAction>, isInteractive: Bool, write: @escaping @Sendable (String) -> Void
  ) {
    self.core = core
    self.isInteractive = isInteractive
    self.write = write
  }

  /// The program's title, its first line.
  public static let title = "PropertyScene · a Display-Logic-Core scene: logic, presenter, navigator, workers"

  /// The last line the session writes for `logic`.
  public static func farewell(_ logic: PropertyLogic) -> String {
    guard let property = logic.property else { return "bye: #\(logic.propertyID) not loaded" }
    return "bye: #\(property.id) \(property.title), \(logic.isFavourite ? "in" : "not in") your favourites"
  }

  /// What the session writes for a command that drew nothing: the
  /// logic's error again (the same mistake twice), or that nothing changed.
  public static func unchanged(_ logic: PropertyLogic) -> String {
    logic.error.map { "  ! \($0)" } ?? "  Nothing to do: that is the screen shown."
  }

  /// Runs the lines until `q`, their end, the scene's close or the task's
  /// cancellation, then shuts the core down and returns the final logic
  /// state.
  public func run(lines: some AsyncSequence<String, Never>) async -> PropertyLogic {
    let write = write
    let draws = CallCount()
    write("\(Self.title)\n")
    // The navigator: the route, selected inside the core. Subscribed first,
    // so that its line comes before the screen it opens.
    let navigator = PropertyNavigator(write: write)
    let navigation = await core.subscribe(to: \.route) { route in
      draws.increment()
      navigator.navigate(to: route)
    }
    // The display: props, selected inside the core by the presenter; none
    // while the navigator's screen covers the property's.
    let display = await core.subscribe(to: PropertyPresenter.shown) { props in
      guard let props else { return }
      draws.increment()
      write(props.lines.map { "\($0)\n" }.joined())
    }
    var isOpen = await handle(.onAppear)
    if isOpen && !Task.isCancelled {
      prompt()
      reading: for await line in lines {
        if !isInteractive { write("> \(line.escapedForTerminal())\n") }
        let route = await core.state.route
        switch PropertySceneInput(line, on: route) {
        case .quit:
          break reading
        case .ignore:
          break
        case .unknown(let text):
          write("\(PropertySceneInput.unknownLine(text, on: route))\n")
        case .refused(let reason):
          write("\(reason)\n")
        case .send(let action):
          let drawn = draws.value
          isOpen = await handle(action)
          if !isOpen || Task.isCancelled { break reading }
          // The display and the navigator have been called by now (see
          // `handle`): nothing drawn means nothing changed.
          if draws.value == drawn { write("\(Self.unchanged(await core.state))\n") }
        }
        prompt()
      }
    }
    let final = await core.state
    await core.shutdown(.immediate)
    display.cancel()
    navigation.cancel()
    write("\(Self.farewell(final))\n")
    return final
  }

  /// Dispatches `action`, waits for the request it started (or the task's
  /// cancellation, Ctrl-C); whether the scene is still open.
  private func handle(_ action: PropertyLogicAction) async -> Bool {
    do {
      try await core.dispatch(action)
    } catch {
      return false  // shut down from elsewhere: nothing more will be reduced
    }
    for await isLoading in await core.observe(\.isLoading) where !isLoading { break }
    // On the core, after the publication the loop above woke for: the
    // display and the navigator have been called with it.
    return await core.state.route != .closed
  }

  private func prompt() {
    if isInteractive { write("> ") }
  }
}

extension PropertyLogic {
  /// Whether a worker's request runs.
  public var isLoading: Bool { loading != nil }
}
