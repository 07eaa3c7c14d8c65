/// The DLC scene's navigator: it leaves the scene's screen for the screens
/// its routes name. In an app it would push a view controller or set a
/// navigation path, on the main actor; here it writes what it opens.
///
/// ```swift
/// let navigator = PropertyNavigator { print($0, terminator: "") }
/// let subscriber = await scene.subscribe(to: \.route) { navigator.navigate(to: $0) }
/// ```
///
/// It reads only the route: the logic decides where to go (and whether it
/// may: no contact form before the property is loaded), the navigator how.
public struct PropertyNavigator: Sendable {
  private let write: @Sendable (String) -> Void

  /// A navigator writing the screens it opens to `write`.
  public init(write: @escaping @Sendable (String) -> Void) {
    self.write = write
  }

  /// The line written for `route`.
  public static func line(for route: PropertySceneRoute) -> String {
    switch route {
    case .property: "navigator › the property"
    case .contact(let title): "navigator › the contact form: a message to the agent letting \(title). back returns."
    case .viewing(let title): "navigator › viewings of \(title): Saturday 10:00, 11:30 or 14:00. back returns."
    case .closed: "navigator › the scene is closed"
    }
  }

  /// Opens the screen of `route`.
  public func navigate(to route: PropertySceneRoute) {
    write("\(Self.line(for: route))\n")
  }
}
