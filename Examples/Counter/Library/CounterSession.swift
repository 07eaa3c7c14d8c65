import AsyncCore

/// Runs the counter over lines of commands, and writes what its two
/// observers see: a synchronous subscriber to the count, and a `for await`
/// loop over the whole state.
///
/// ```swift
/// let core = Core(initialState: Counter(), reducer: Reduce(Counter.reduce))
/// let session = CounterSession(core: core) { print($0) }
/// let final = await session.run(lines: commandLines, echo: true)
/// ```
///
/// The transcript for `+ step 5 +`, with `echo`:
///
/// ```text
/// subscriber  count 0
/// for await   count 0, step 1
/// > +
/// subscriber  count 1
/// for await   count 1, step 1
/// > step 5
/// for await   count 1, step 5
/// > +
/// subscriber  count 6
/// for await   count 6, step 5
/// bye: count 6, step 5
/// ```
///
/// The subscriber selects `\.count`, so a step change alone does not call
/// it; the loop observes the whole state, so it sees the step change.
public struct CounterSession: Sendable {
  /// The core the session drives; it is shut down when the session ends.
  public let core: Core<Counter, CounterAction>
  private let write: @Sendable (String) -> Void

  /// A session over `core` that writes its transcript a line at a time.
  public init(core: Core<Counter, CounterAction>, write: @escaping @Sendable (String) -> Void) {
    self.core = core
    self.write = write
  }

  /// Runs the commands in `lines` until `q` or the end of the lines, then
  /// shuts the core down and returns the final state.
  ///
  /// Each command is dispatched, so the subscriber has written the new
  /// count when `dispatch` returns; the session then waits until the
  /// `for await` loop shows the new state too.
  ///
  /// - Parameters:
  ///   - lines: Command lines (``CounterCommand/parse(_:)``), such as
  ///     standard input.
  ///   - echo: Whether to write each command (`> +`), for input the
  ///     terminal did not show as it was typed.
  ///   - prompt: Called before each line is read (an interactive prompt).
  public func run(
    lines: some AsyncSequence<String, Never>,
    echo: Bool,
    prompt: @escaping @Sendable () -> Void = {}
  ) async -> Counter {
    let write = write
    // Called inside the core, before `dispatch` returns, with each new count.
    let subscriber = await core.subscribe(to: \.count) { count in
      write("subscriber  count \(count)")
    }
    let screen = Screen(write: write)
    let states = await core.states()  // registered now: its first value is the current state
    return await withDiscardingTaskGroup { group in
      group.addTask {
        for await state in states { await screen.show(state) }
        await screen.close()
      }
      await screen.waitUntilShowing(await core.state)
      prompt()
      reading: for await line in lines {
        let commands: [CounterCommand]
        do {
          commands = try CounterCommand.parse(line)
        } catch {
          write("? \(error)")
          prompt()
          continue
        }
        for command in commands {
          if echo { write("> \(command.text)") }
          guard case .send(let action) = command else { break reading }
          do {
            try await core.dispatch(action)
          } catch {
            break reading  // shut down from elsewhere: nothing more will be reduced
          }
          await screen.waitUntilShowing(await core.state)
        }
        prompt()
      }
      let final = await core.state
      write("bye: count \(final.count), step \(final.step)")
      // Ends the loop after its final value, and the subscription.
      await core.shutdown()
      subscriber.cancel()
      return final
    }
  }
}
