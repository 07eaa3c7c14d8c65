import AsyncCore

// What a journaled core shows: the same observation as a `Core`'s,
// forwarded (what it publishes is journaled state only).

extension JournaledCore {
  /// Observes a part of the state, as `Core.observe(_:removeDuplicates:buffering:)`.
  ///
  /// ```swift
  /// for await total in await orders.observe(\.total) { print(total) }
  /// ```
  public func observe<Props: Sendable>(
    _ keyPath: any KeyPath<State, Props> & Sendable,
    removeDuplicates isDuplicate: (@Sendable (Props, Props) -> Bool)? = nil,
    buffering policy: BufferingPolicy = .latest
  ) async -> CoreStream<Props> {
    await core.observe(keyPath, removeDuplicates: isDuplicate, buffering: policy)
  }

  /// Observes what `select` makes of the state, as `Core.observe(_:removeDuplicates:buffering:)`.
  ///
  /// ```swift
  /// for await count in await orders.observe({ $0.orders.count }) { print(count) }
  /// ```
  public func observe<Props: Sendable>(
    _ select: @escaping @Sendable (State) -> Props,
    removeDuplicates isDuplicate: (@Sendable (Props, Props) -> Bool)? = nil,
    buffering policy: BufferingPolicy = .latest
  ) async -> CoreStream<Props> {
    await core.observe(select, removeDuplicates: isDuplicate, buffering: policy)
  }

  /// Observes the whole state, as `Core.states(removeDuplicates:buffering:)`.
  ///
  /// ```swift
  /// for await orders in await orders.states() { print(orders.total) }
  /// ```
  public func states(
    removeDuplicates isDuplicate: (@Sendable (State, State) -> Bool)? = nil,
    buffering policy: BufferingPolicy = .latest
  ) async -> CoreStream<State> {
    await core.states(removeDuplicates: isDuplicate, buffering: policy)
  }

  /// Every action reduced from now on, with the state before and after it,
  /// as `Core.actions(buffering:)`.
  ///
  /// ```swift
  /// for await record in await orders.actions() { print(record.action) }
  /// ```
  public func actions(buffering policy: BufferingPolicy = .all) async -> CoreStream<ActionRecord<State, Action>> {
    await core.actions(buffering: policy)
  }

  /// Calls `body` with each new value of a part of the state, as
  /// `Core.subscribe(to:removeDuplicates:buffering:_:)`.
  ///
  /// ```swift
  /// let subscriber = await orders.subscribe(to: \.total) { print($0) }
  /// ```
  public func subscribe<Props: Sendable>(
    to keyPath: any KeyPath<State, Props> & Sendable,
    removeDuplicates isDuplicate: (@Sendable (Props, Props) -> Bool)? = nil,
    buffering policy: BufferingPolicy = .latest,
    _ body: @escaping @Sendable (Props) -> Void
  ) async -> Subscriber {
    await core.subscribe(to: keyPath, removeDuplicates: isDuplicate, buffering: policy, body)
  }

  /// The core's load figures, as `Core.metrics`.
  ///
  /// ```swift
  /// print(orders.metrics.queueDepth)
  /// ```
  public var metrics: CoreMetrics { core.metrics }

  /// Whether ``shutdown(_:)`` has been called.
  ///
  /// ```swift
  /// if orders.hasShutDown { return }
  /// ```
  public var hasShutDown: Bool { core.hasShutDown }
}
