// How values are shown to people, in a test core's failures and in the
// inspector alike. `package`: AsyncCoreTesting and AsyncCoreJournal use it.

/// How values are rendered: as a test would write them. Enum cases with a
/// leading dot and their payload (`.tick(attempt: 1)`), optionals unwrapped
/// (`nil` or the value), strings quoted, types without their module or the
/// function they are declared in (`Child(name: "a")`), dictionaries and
/// sets in a stable order. A type with a description of its own keeps it.
///
/// Values are cut after ``maximumValueLength`` UTF-8 bytes and messages
/// after ``maximumMessageLength``, counting scalars, not characters; control
/// and invisible format characters in a value are escaped as `\u{…}`.
package enum ValueRendering {
  /// The bytes a rendered value keeps: enough for any state a test reads,
  /// far less than a runaway description.
  package static let maximumValueLength = 4_096

  /// The bytes a failure's message keeps: a few values and a few dozen
  /// differing fields.
  package static let maximumMessageLength = 16_384

  /// An action, a field's value, any value, as the test wrote it.
  package static func value(_ value: Any) -> String {
    bounded(render(value, depth: 0), to: maximumValueLength, escaping: true)
  }

  /// An error an effect or a closure threw: its own description if it has
  /// one; else an enum case with its type (`APIError.offline`), any other
  /// value as ``value(_:)`` renders it (`Boom()`). Not `String(reflecting:)`,
  /// which writes a local type with an address that changes per run.
  package static func error(_ error: any Error) -> String {
    if error is any CustomStringConvertible || error is any CustomDebugStringConvertible {
      return bounded(String(reflecting: error), to: maximumValueLength, escaping: true)
    }
    let text = render(error, depth: 0)
    let isEnum = Mirror(reflecting: error).displayStyle == .enum
    return bounded(isEnum ? "\(type(of: error))" + text : text, to: maximumValueLength, escaping: true)
  }

  /// `text`, or as much of it as fits in `limit` bytes of UTF-8 (cut
  /// between Unicode scalars) and a marker; with `escaping`, control and
  /// format characters escaped first (a value's own text: a message keeps
  /// its line breaks).
  package static func bounded(_ text: String, to limit: Int, escaping: Bool = false) -> String {
    // The common case, short and plain, returns the text as it is.
    guard text.utf8.count > limit || (escaping && text.unicodeScalars.contains(where: needsEscape)) else {
      return text
    }
    var result = ""
    var written = 0
    for scalar in text.unicodeScalars {
      let piece =
        escaping && needsEscape(scalar)
        ? "\\u{\(String(scalar.value, radix: 16, uppercase: true))}" : String(scalar)
      guard written + piece.utf8.count <= limit else {
        return result + "… (cut after \(limit) bytes)"
      }
      result += piece
      written += piece.utf8.count
    }
    return result
  }

  /// Whether a value's text shows `scalar` escaped: it is invisible, or
  /// changes how the text around it is shown.
  private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.properties.generalCategory {
    case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned: true
    default: false
    }
  }

  /// How deep rendering and comparing go: far enough for any state, and it
  /// stops a class graph with a cycle.
  private static let maximumDepth = 16

  private static func render(_ value: Any, depth: Int) -> String {
    let mirror = Mirror(reflecting: value)
    guard depth < maximumDepth else { return String(reflecting: value) }
    switch mirror.displayStyle {
    case .optional?:
      guard let wrapped = mirror.children.first else { return "nil" }
      return render(wrapped.value, depth: depth + 1)
    case .collection?:
      // Stops once the text is long enough to be cut: a million elements
      // are not all rendered.
      var elements: [String] = []
      var length = 0
      for child in mirror.children {
        guard length <= maximumValueLength else {
          elements.append("…")
          break
        }
        let element = render(child.value, depth: depth + 1)
        length += element.utf8.count + 2
        elements.append(element)
      }
      return "[" + elements.joined(separator: ", ") + "]"
    case .set?:
      return "[" + mirror.children.map { render($0.value, depth: depth + 1) }.sorted().joined(separator: ", ") + "]"
    case .dictionary?:
      let pairs = entries(of: mirror).map {
        render($0.key, depth: depth + 1) + ": " + render($0.value, depth: depth + 1)
      }
      return pairs.isEmpty ? "[:]" : "[" + pairs.sorted().joined(separator: ", ") + "]"
    default:
      break
    }
    if value is any CustomStringConvertible || value is any CustomDebugStringConvertible {
      return String(reflecting: value)
    }
    switch mirror.displayStyle {
    case .enum?:
      guard let payload = mirror.children.first else { return "." + String(describing: value) }
      return "." + (payload.label ?? String(describing: value)) + arguments(payload.value, depth: depth + 1)
    case .struct?, .class?:
      let fields = mirror.children.map { ($0.label.map { $0 + ": " } ?? "") + render($0.value, depth: depth + 1) }
      return "\(type(of: value))(" + fields.joined(separator: ", ") + ")"
    case .tuple?:
      return arguments(value, depth: depth)
    default:
      return String(reflecting: value)
    }
  }

  /// An enum payload in parentheses: a tuple's elements with their labels,
  /// or the one value.
  private static func arguments(_ payload: Any, depth: Int) -> String {
    let mirror = Mirror(reflecting: payload)
    guard mirror.displayStyle == .tuple else { return "(" + render(payload, depth: depth) + ")" }
    let elements = mirror.children.map { child -> String in
      let label = child.label.flatMap { $0.hasPrefix(".") ? nil : $0 + ": " } ?? ""
      return label + render(child.value, depth: depth + 1)
    }
    return "(" + elements.joined(separator: ", ") + ")"
  }

  /// A dictionary's entries, as its mirror gives them (each a key-value
  /// tuple).
  private static func entries(of mirror: Mirror) -> [(key: Any, value: Any)] {
    mirror.children.compactMap { child in
      let pair = Array(Mirror(reflecting: child.value).children)
      guard pair.count == 2 else { return nil }
      return (pair[0].value, pair[1].value)
    }
  }

  /// The fields where `after` differs from `before`, by path
  /// (`items[2].isDone`, `scores["ann"]`), both values rendered: a `Mirror`
  /// walk through structs, classes, tuples, optionals, equal-length arrays
  /// and dictionaries; other values compare as text. An entry one side lacks
  /// shows `absent`; with no field differing as text, the whole values at `""`.
  package static func differences(before: Any, after: Any) -> [(path: String, before: String, after: String)] {
    var found: [(path: String, before: String, after: String)] = []
    walk(before, after, path: "", depth: 0, into: &found)
    if found.isEmpty {
      found = [(path: "", before: value(before), after: value(after))]
    }
    return found
  }

  private static func walk(
    _ before: Any, _ after: Any, path: String, depth: Int,
    into found: inout [(path: String, before: String, after: String)]
  ) {
    let left = Mirror(reflecting: before)
    let right = Mirror(reflecting: after)
    if depth < maximumDepth, left.subjectType == right.subjectType, left.displayStyle == right.displayStyle {
      switch left.displayStyle {
      case .struct?, .class?, .tuple?:
        let leftChildren = Array(left.children)
        let rightChildren = Array(right.children)
        if !leftChildren.isEmpty, leftChildren.count == rightChildren.count,
          zip(leftChildren, rightChildren).allSatisfy({ $0.label == $1.label })
        {
          for (index, (leftChild, rightChild)) in zip(leftChildren, rightChildren).enumerated() {
            let label = leftChild.label ?? String(index)
            let childPath = path.isEmpty ? label : path + "." + label
            walk(leftChild.value, rightChild.value, path: childPath, depth: depth + 1, into: &found)
          }
          return
        }
      case .optional?:
        if let leftValue = left.children.first?.value, let rightValue = right.children.first?.value {
          walk(leftValue, rightValue, path: path, depth: depth + 1, into: &found)
          return
        }
      case .collection?:
        let leftChildren = Array(left.children)
        let rightChildren = Array(right.children)
        if leftChildren.count == rightChildren.count {
          for (index, (leftChild, rightChild)) in zip(leftChildren, rightChildren).enumerated() {
            walk(leftChild.value, rightChild.value, path: path + "[\(index)]", depth: depth + 1, into: &found)
          }
          return
        }
      case .dictionary?:
        let leftEntries = Dictionary(
          entries(of: left).map { (render($0.key, depth: depth + 1), $0.value) },
          uniquingKeysWith: { first, _ in first })
        let rightEntries = Dictionary(
          entries(of: right).map { (render($0.key, depth: depth + 1), $0.value) },
          uniquingKeysWith: { first, _ in first })
        for key in Set(leftEntries.keys).union(rightEntries.keys).sorted() {
          let entryPath = path + "[\(key)]"
          switch (leftEntries[key], rightEntries[key]) {
          case (let leftValue?, let rightValue?):
            walk(leftValue, rightValue, path: entryPath, depth: depth + 1, into: &found)
          case (let leftValue?, nil):
            found.append((path: entryPath, before: value(leftValue), after: "absent"))
          case (nil, let rightValue?):
            found.append((path: entryPath, before: "absent", after: value(rightValue)))
          case (nil, nil):
            break
          }
        }
        return
      default:
        break
      }
    }
    // Compared whole, shown cut: two long texts may differ only after the cut.
    let beforeText = render(before, depth: 0)
    let afterText = render(after, depth: 0)
    if beforeText != afterText {
      found.append(
        (
          path: path, before: bounded(beforeText, to: maximumValueLength),
          after: bounded(afterText, to: maximumValueLength)
        ))
    }
  }
}
