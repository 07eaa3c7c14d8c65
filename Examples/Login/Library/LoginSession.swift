import AsyncCore
import AsyncCoreExampleSupport

/// Runs the login over lines typed at its prompt: a `for await` loop draws
/// each state on a ``LoginDisplay``, and each line becomes an action
/// (``LoginInput``).
///
/// ```swift
/// let display = LoginDisplay(isTerminal: false) { print($0, terminator: "") }
/// let server = FakeOTPServer(latency: .seconds(1), deliver: { await display.deliver($0) })
/// let core = Core(
///   initialState: Login(), dependencies: Dependencies { $0.otpServer = server }, reducer: Login.reducer)
/// let final = await LoginSession(core: core, display: display).run(lines: standardInputLines)
/// ```
///
/// While a request runs, the next line waits (a terminal keeps what is
/// typed meanwhile), so piped input is taken in order: the phone number,
/// then, once the code screen is there, the code. A `q` typed meanwhile,
/// and the end of the lines, are read once the answer has come.
///
/// `report FILE` writes a bug report of the session so far to FILE (its
/// core records its newest ``BugReport/limit`` actions from the start) and
/// shows a line with where and how many actions, or why it could not; the
/// session goes on either way.
///
/// The session ends at `q`, at the end of the lines, or when its task is
/// cancelled (Ctrl-C, through ``Interrupt/runSession(ending:_:)``), at once
/// even while a request runs: it shuts the core down with
/// ``ShutdownMode/immediate``, which cancels the countdown and any request,
/// so nothing keeps the process alive, and writes `bye: signed in as …` or
/// `bye: not signed in`.
public struct LoginSession: Sendable {
  /// The core the session drives; shut down when the session ends.
  public let core: Core<Login, LoginAction>
  /// Where the screens are drawn.
  public let display: LoginDisplay

  public init(core: Core<Login, LoginAction>, display: LoginDisplay) {
    self.core = core
    self.display = display
  }

  /// The last line the session writes for `state`.
  public static func farewell(_ state: Login) -> String {
    state.signedInPhone.map { "bye: signed in as \($0.escapedForTerminal())" } ?? "bye: not signed in"
  }

  /// Runs the lines until `q`, their end or the task's cancellation, then
  /// shuts the core down and returns the final state.
  public func run(lines: some AsyncSequence<String, Never>) async -> Login {
    let core = core
    let display = display
    // `.all`: every screen in order, the loading one included however
    // quickly the answer comes, so a piped run's transcript shows each step.
    let states = await core.states(buffering: .all)
    // From the start: `report FILE` writes what it holds.
    let recorder = await core.record(last: BugReport.limit)
    let final = await withDiscardingTaskGroup { group in
      group.addTask {
        for await state in states { await display.show(state) }
      }
      reading: for await line in lines {
        await display.lineRead()
        switch LoginInput(line, on: await core.state) {
        case .quit:
          break reading
        case .ignore:
          break
        case .report(let path):
          await display.note(await BugReport.write(recorder, to: path))
        case .refused(let reason):
          await display.note(reason)
        case .send(let action):
          do {
            try await core.dispatch(action)
          } catch {
            break reading  // shut down from elsewhere: nothing more will be reduced
          }
          // The request's answer, before the next line; cancelled (Ctrl-C),
          // the wait ends and so does the session.
          for await isLoading in await core.observe(\.isLoading) where !isLoading { break }
          if Task.isCancelled { break reading }
        }
        await display.lineHandled()
      }
      let final = await core.state
      // Cancels the countdown and any request; the loop above ends after
      // the final state.
      await core.shutdown(.immediate)
      return final
    }
    await display.close(Self.farewell(final))
    return final
  }
}
