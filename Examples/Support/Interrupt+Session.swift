extension Interrupt {
  /// Runs an interactive session, and makes the first Ctrl-C end it at
  /// once, even while it waits for a request: `lines` end and the
  /// session's task is cancelled.
  ///
  /// ```swift
  /// let lines = InputLines()
  /// await Interrupt.runSession(ending: lines) {   // call it before the first screen
  ///   _ = await session.run(lines: lines)         // says bye, after Ctrl-C too
  /// }
  /// ```
  ///
  /// A session waits for each request's answer before it reads the next
  /// line, so that piped input is taken in order; ending its lines alone
  /// would leave Ctrl-C waiting for that answer. Cancelled, the session's
  /// wait ends, and the session ends as at `q`: it shuts its core down
  /// (which cancels the request) and writes its `bye:` line. A second
  /// Ctrl-C ends the process at once.
  ///
  /// Ctrl-C is handled before the session starts, so before it writes
  /// anything: one that comes before the session's task runs cancels it as
  /// it starts (the signal is kept in a stream until the watching task
  /// reads it).
  ///
  /// - Parameters:
  ///   - lines: The session's lines; Ctrl-C ends them (their `onEnd` runs
  ///     then) before it cancels the session.
  ///   - session: The session; it returns once it has said bye.
  public static func runSession(ending lines: InputLines, _ session: @escaping @Sendable () async -> Void) async {
    // Finished by the first Ctrl-C; kept until read, so a Ctrl-C that comes
    // before the watcher runs still ends the session.
    let (interrupts, interrupted) = AsyncStream.makeStream(of: Void.self)
    let interrupt = await Interrupt {
      lines.end()
      interrupted.finish()
    }
    // The session beside its watcher: whichever ends first, the other is
    // cancelled: the watcher once the session said bye, the session at Ctrl-C.
    await withTaskGroup(of: Void.self) { group in
      group.addTask { await session() }
      group.addTask {
        for await _ in interrupts {}
      }
      _ = await group.next()
      group.cancelAll()
    }
    interrupt.stop()
  }
}
