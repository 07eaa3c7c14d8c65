/// What one recorder holds, and whether it still takes actions. Pure:
/// `RecorderStorage` runs it under a lock.
///
/// A ring of the newest `limit` actions, each with its time and the state
/// after it, plus the state before the oldest: an action falling out leaves
/// its state as that one, so a recording stays exact with `limit + 1` states.
struct RecorderStateMachine<State: Sendable, Action: Sendable> {
  enum Phase: Equatable {
    /// Takes each action the core reduces.
    case recording
    /// Took its last action: ``Recorder/cancel()`` was called, or the core
    /// stopped. Still answers what it holds.
    case stopped
    /// Its recorder is gone: nobody can ask any more, so it holds nothing.
    case released
  }

  private(set) var phase = Phase.recording
  let limit: Int
  /// The state before the oldest kept action.
  private(set) var initialState: State
  /// The kept actions with their times and the states after them, a ring
  /// whose oldest is at `oldest` once it is full.
  private var ring: [(entry: Recording<State, Action>.Entry, after: State)] = []
  private var oldest = 0

  init(limit: Int, initialState: State) {
    self.limit = limit
    self.initialState = initialState
    ring.reserveCapacity(Swift.min(limit, 1_024))
  }

  /// The number of actions kept.
  var count: Int { ring.count }

  /// Takes one reduced action, its time and the state it left; returns
  /// whether it was kept (not once stopped). The oldest falls out when the
  /// ring is full.
  @discardableResult
  mutating func append(_ action: Action, at time: Duration, leaving state: State) -> Bool {
    guard phase == .recording else { return false }
    let element = (Recording<State, Action>.Entry(action: action, time: time), state)
    if ring.count < limit {
      ring.append(element)
    } else {
      initialState = ring[oldest].after
      ring[oldest] = element
      oldest = (oldest + 1) % limit
    }
    return true
  }

  /// Stops taking actions; returns whether it was recording (the storage
  /// then counts it out of its core's observers, once).
  mutating func stop() -> Bool {
    guard phase == .recording else { return false }
    phase = .stopped
    return true
  }

  /// The recorder is gone: stops, and drops what it held. Returns whether
  /// it was recording.
  mutating func release() -> Bool {
    let wasRecording = phase == .recording
    phase = .released
    ring = []
    oldest = 0
    return wasRecording
  }

  /// What it holds now, oldest action first.
  func recording() -> Recording<State, Action> {
    let ordered = ring[oldest...] + ring[..<oldest]
    return Recording(
      initialState: initialState, entries: ordered.map(\.entry), finalState: ordered.last?.after ?? initialState)
  }
}
