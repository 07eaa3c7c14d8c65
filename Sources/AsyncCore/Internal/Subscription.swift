/// What the core needs of any observer's cell, whatever it delivers: whether
/// its consumer is still there, and a way to end it.
@usableFromInline
protocol ObserverLifetime: AnyObject, Sendable {
  /// `false` once either side has ended; the core then drops the observer.
  var isActive: Bool { get }
  /// The core has ended: the consumer gets what is buffered, then `nil`.
  func finish()
}

/// The core's side of one state observer.
///
/// `publish` selects from the state, drops the value if it duplicates the
/// last one delivered, and delivers the rest to the cell: an observer whose
/// value did not change costs its selector and one comparison, no lock. It
/// is a closure made in `@inlinable` code, so the selector, the comparison
/// and the delivery are compiled for the client's concrete types rather than
/// run as generic code through a protocol witness.
@usableFromInline
struct Subscription<State>: Sendable {
  @usableFromInline let publish: @Sendable (State) -> Void
  @usableFromInline let lifetime: any ObserverLifetime

  @inlinable
  init<Props: Sendable>(
    cell: ObserverCell<Props>,
    select: @escaping @Sendable (State) -> Props,
    isDuplicate: (@Sendable (Props, Props) -> Bool)?
  ) {
    if let isDuplicate {
      self.publish = { state in
        let props = select(state)
        if let previous = cell.lastDelivered, isDuplicate(previous, props) { return }
        cell.lastDelivered = props
        cell.deliver(props)
      }
    } else {
      self.publish = { state in cell.deliver(select(state)) }
    }
    self.lifetime = cell
  }
}
