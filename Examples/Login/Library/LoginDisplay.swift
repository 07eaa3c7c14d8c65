/// Draws the login's screens as its `for await` loop takes each state.
///
/// ```swift
/// let display = LoginDisplay(isTerminal: true) { text in StandardStreams.output(text) }
/// for await state in await core.states(buffering: .all) { await display.show(state) }
/// ```
///
/// On a terminal, a new screen clears the last one and is drawn from the
/// top, with the prompt `> ` below it. When only the countdown changed, that
/// line alone is redrawn (the cursor saved and put back), so what the user
/// is typing stays where it is. Elsewhere (a pipe, a file, a test) each new
/// screen is written whole after a blank line, a countdown tick's too: a
/// reader of the transcript sees every screen as the terminal showed it,
/// never a line out of its screen.
///
/// The fake server's SMS comes in through ``deliver(_:)``: it is not the
/// app's state (it arrived on the user's phone), but the screen shows it
/// so that the person trying the example can type the code.
public actor LoginDisplay {
  /// Whether the screen is redrawn in place with ANSI escapes.
  public nonisolated let isTerminal: Bool
  private let write: @Sendable (String) -> Void
  private var state: Login?
  private var sms: SMS?
  private var drawn: LoginScreen?
  /// The user pressed Enter: the terminal moved the cursor off the prompt
  /// line, so the next draw must be a whole one.
  private var cursorMoved = false

  /// A display writing to `write`, with escapes if `isTerminal`.
  public init(isTerminal: Bool, write: @escaping @Sendable (String) -> Void) {
    self.isTerminal = isTerminal
    self.write = write
  }

  /// Draws the screen for `state`, if it differs from the one shown.
  public func show(_ state: Login) {
    self.state = state
    draw()
  }

  /// Shows the SMS the fake server sent.
  public func deliver(_ sms: SMS) {
    self.sms = sms
    draw()
  }

  /// Called when a line was read: on a terminal, its Enter moved the cursor.
  public func lineRead() {
    cursorMoved = isTerminal
  }

  /// Called when the line read has been handled: puts the prompt back if no
  /// new screen was drawn meanwhile (an empty line, an unchanged screen).
  public func lineHandled() {
    if cursorMoved, let drawn { drawWhole(drawn) }
  }

  /// Writes `line` under the screen: the answer to a command that drew no
  /// new screen (`report FILE`). On a terminal the prompt follows it, and
  /// it stays until the next screen.
  public func note(_ line: String) {
    // On a terminal the Enter left the cursor on the line under the prompt.
    write(isTerminal ? "\(line)\n> " : "\(line)\n")
    cursorMoved = false
  }

  /// Ends the display with `farewell`, on a line of its own.
  public func close(_ farewell: String) {
    // On a terminal the cursor is on the prompt line (Ctrl-D) or on the
    // empty line below it (q and Enter): write over either.
    write(isTerminal ? "\r\u{1B}[K\(farewell)\n" : "\(farewell)\n")
  }

  private func draw() {
    guard let state else { return }
    let screen = LoginScreen(state, sms: sms)
    guard let drawn else {
      drawWhole(screen)
      return
    }
    if screen == drawn { return }
    let changed = screen.lines.indices.filter {
      drawn.lines.indices.contains($0) && drawn.lines[$0] != screen.lines[$0]
    }
    // Only a terminal redraws a line in place; a pipe's reader gets screens.
    if isTerminal, screen.lines.count == drawn.lines.count, screen.countdownLine == drawn.countdownLine,
      let line = screen.countdownLine, changed == [line]
    {
      drawLine(line, of: screen)
    } else {
      drawWhole(screen)
    }
  }

  private func drawWhole(_ screen: LoginScreen) {
    let text = screen.lines.joined(separator: "\n")
    if isTerminal {
      // Home, clear the screen, the lines, the prompt.
      write("\u{1B}[H\u{1B}[2J\(text)\n> ")
    } else {
      write(drawn == nil ? "\(text)\n" : "\n\(text)\n")
    }
    drawn = screen
    cursorMoved = false
  }

  /// Redraws line `index` in place, on a terminal.
  private func drawLine(_ index: Int, of screen: LoginScreen) {
    // Save the cursor, go to the line (rows count from 1), clear it, write
    // it, put the cursor back.
    write("\u{1B}7\u{1B}[\(index + 1);1H\u{1B}[2K\(screen.lines[index])\u{1B}8")
    drawn = screen
  }
}
