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
/// `publish` selects from the state and delivers the result to the cell
/// unless it duplicates the last value delivered. It is a closure made in
/// `@inlinable` code, so the selector, the comparison and the delivery are
/// compiled for the client's concrete types rather than run as generic code
/// through a protocol witness.
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
    self.publish = { state in cell.deliver(select(state), unlessDuplicate: isDuplicate) }
    self.lifetime = cell
  }
}
