import AsyncCore
import AsyncCoreExampleSupport

/// Runs the property search over lines typed at its prompt: a subscriber
/// draws each new screen, and each line becomes an action
/// (``PropertySearchInput``).
///
/// ```swift
/// let core = Core(
///   initialState: PropertySearch(), dependencies: Dependencies { $0.propertyAPI = api },
///   reducer: PropertySearch.reducer)
/// let session = PropertySearchSession(core: core, isTerminal: false) { print($0, terminator: "") }
/// let final = await session.run(lines: standardInputLines)
/// ```
///
/// The screen is selected inside the core (`subscribe(to:)` with
/// ``PropertySearchScreen/init(_:)`` as the selector), so the subscriber is
/// called only when what it shows changed. While a request runs, the next
/// line waits, so piped input is taken in order: a place, then, once its
/// results are there, a number. A `q` typed meanwhile, and the end of the
/// lines, are read once the answer has come.
///
/// Every command gets a visible answer: a new screen, or, when it drew
/// none, a line saying why: a refusal (`back` on the search prompt), the
/// screen's error again (`9` twice, on a list of three), or that the
/// screen shown is where the command leads (``unchanged(_:)``).
///
/// On a terminal each screen is drawn from the top of a cleared terminal,
/// with the prompt `> ` below it. Elsewhere (a pipe, a file, a test) each
/// screen is written after the last, and each line read is echoed as
/// `> line` before what it did.
///
/// `report FILE` writes a bug report of the session so far to FILE (its
/// core records its newest ``BugReport/limit`` actions from the start) and
/// answers with where and how many actions, or why it could not; the
/// session goes on either way.
///
/// The session ends at `q`, at the end of the lines, or when its task is
/// cancelled (Ctrl-C, through ``Interrupt/runSession(ending:_:)``), at once
/// even while a request runs: it shuts the core down with
/// ``ShutdownMode/immediate``, which cancels a request still running, and
/// writes `bye: ` and the breadcrumb of where it ended.
public struct PropertySearchSession: Sendable {
  /// The core the session drives; shut down when the session ends.
  public let core: Core<PropertySearch, PropertySearchAction>
  /// Whether the screen is redrawn in place with ANSI escapes.
  public let isTerminal: Bool
  private let write: @Sendable (String) -> Void

  public init(
    core: Core<PropertySearch, PropertySearchAction>, isTerminal: Bool, write: @escaping @Sendable (String) -> Void
  ) {
    self.core = core
    self.isTerminal = isTerminal
    self.write = write
  }

  /// The last line the session writes for `state`.
  public static func farewell(_ state: PropertySearch) -> String {
    "bye: \(PropertySearchScreen.breadcrumb(state.stack))"
  }

  /// What the session writes for a command that drew nothing new: the
  /// screen's error again (the same mistake twice), or that the screen
  /// shown is where the command leads.
  public static func unchanged(_ screen: PropertySearchScreen) -> String {
    screen.errorLine ?? "  Nothing to do: that is the screen shown."
  }

  /// Runs the lines until `q`, their end or the task's cancellation, then
  /// shuts the core down and returns the final state.
  public func run(lines: some AsyncSequence<String, Never>) async -> PropertySearch {
    let draws = CallCount()
    let draw = draw
    if !isTerminal { write("\(PropertySearchScreen.title)\n") }
    // Called inside the core, now with the current screen, then after each
    // publication whose screen differs.
    // From the start: `report FILE` writes what it holds.
    let recorder = await core.record(last: BugReport.limit)
    let subscriber = await core.subscribe(
      to: { PropertySearchScreen($0) },
      { screen in
        draws.increment()
        draw(screen, nil)
      })
    reading: for await line in lines {
      if !isTerminal { write("> \(line.escapedForTerminal())\n") }
      // Every command gets an answer: a new screen, or a line saying why not.
      var answer: String?
      switch PropertySearchInput(line, on: await core.state) {
      case .quit:
        break reading
      case .ignore:
        break
      case .refused(let reason):
        answer = reason
      case .report(let path):
        answer = await BugReport.write(recorder, to: path)
      case .send(let action):
        let drawn = draws.value
        do {
          try await core.dispatch(action)
        } catch {
          break reading  // shut down from elsewhere: nothing more will be reduced
        }
        // The request's answer, before the next line; cancelled (Ctrl-C),
        // the wait ends and so does the session.
        for await isLoading in await core.observe(\.isLoading) where !isLoading { break }
        if Task.isCancelled { break reading }
        // On the core, after the publication the loop above woke for: the
        // subscriber has drawn it.
        if draws.value == drawn { answer = Self.unchanged(PropertySearchScreen(await core.state)) }
      }
      if isTerminal {
        // The Enter moved the cursor off the prompt: the screen is drawn
        // again, with the answer under it unless the screen shows it.
        let screen = PropertySearchScreen(await core.state)
        draw(screen, answer.flatMap { screen.lines.contains($0) ? nil : $0 })
      } else if let answer {
        write("\(answer)\n")
      }
    }
    let final = await core.state
    await core.shutdown(.immediate)
    subscriber.cancel()
    write(isTerminal ? "\r\u{1B}[K\(Self.farewell(final))\n" : "\(Self.farewell(final))\n")
    return final
  }

  /// Draws a screen, and under it the answer to a command that drew none.
  private var draw: @Sendable (PropertySearchScreen, String?) -> Void {
    { [write, isTerminal] screen, answer in
      let text = (screen.lines + [answer].compactMap { $0 }).joined(separator: "\n")
      // Home, clear the screen, the title, the lines, the prompt.
      write(isTerminal ? "\u{1B}[H\u{1B}[2J\(PropertySearchScreen.title)\n\(text)\n> " : "\(text)\n")
    }
  }
}
