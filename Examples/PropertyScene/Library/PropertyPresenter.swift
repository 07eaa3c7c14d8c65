import AsyncCorePropertySearchExample

/// What the property scene's display shows: text ready to draw, no logic
/// left in it.
///
/// ```swift
/// PropertyPresenter.props(PropertyLogic(propertyID: 42, loading: .property)).lines
/// // ["#42", "  … loading"]
/// ```
public struct PropertyProps: Sendable, Equatable {
  /// The lines, heading first.
  public var lines: [String]

  public init(lines: [String]) {
    self.lines = lines
  }
}

/// The DLC scene's presenter: a pure function from the logic state to the
/// view's props. The scene runs it inside the core, as a subscriber's
/// selector, so the display is called only when the props changed, and
/// never for a change only the navigator cares about (a route).
public enum PropertyPresenter: Sendable {
  /// The props while the property's screen is shown; `nil` while a screen
  /// the navigator opened covers it, or once the scene is closed. The
  /// display's selector: uncovered again, the screen changed from `nil`,
  /// so the terminal draws the property again.
  ///
  /// ```swift
  /// PropertyPresenter.shown(PropertyLogic(propertyID: 42, route: .contact(title: "Loft")))  // nil
  /// ```
  public static func shown(_ logic: PropertyLogic) -> PropertyProps? {
    logic.route == .property ? props(logic) : nil
  }

  /// The props for `logic`.
  public static func props(_ logic: PropertyLogic) -> PropertyProps {
    guard let property = logic.property else {
      var lines = ["#\(logic.propertyID)"]
      // Before it appeared, the scene is about to load: the same props,
      // so appearing draws nothing new.
      if logic.loading == .property || (logic.loading == nil && logic.error == nil) { lines.append("  … loading") }
      if let error = logic.error { lines.append("  ! \(error)") }
      lines.append("  Type back or q.")
      return PropertyProps(lines: lines)
    }
    var lines = [
      "#\(property.id) \(property.title), \(property.place)",
      "  \(PropertySearchScreen.facts(property))",
      "  \(property.summary)",
    ]
    switch (logic.loading, logic.isFavourite) {
    case (.favourite?, true): lines.append("  ★ removing from your favourites…")
    case (.favourite?, false): lines.append("  ☆ saving to your favourites…")
    case (_, true): lines.append("  ★ in your favourites")
    case (_, false): lines.append("  ☆ not in your favourites")
    }
    if let error = logic.error { lines.append("  ! \(error)") }
    lines.append("  Type save, contact, book, back, or q.")
    return PropertyProps(lines: lines)
  }
}
