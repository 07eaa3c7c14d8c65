/// How the test core renders values in its messages.
enum Rendering {
  /// An action (or any value) as the test wrote it: enum cases with a
  /// leading dot (`.tick(attempt: 1)`), other values as `String(describing:)`.
  static func action(_ value: Any) -> String {
    let text = String(describing: value)
    return Mirror(reflecting: value).displayStyle == .enum ? "." + text : text
  }

  /// A field's value: optionals unwrapped (`nil` or the wrapped value), the
  /// rest as `String(reflecting:)` (strings quoted).
  static func value(_ value: Any) -> String {
    let mirror = Mirror(reflecting: value)
    if mirror.displayStyle == .optional {
      guard let wrapped = mirror.children.first else { return "nil" }
      return Self.value(wrapped.value)
    }
    return String(reflecting: value)
  }

  /// The fields where `actual` differs from `expected`, by path, found by
  /// walking both with `Mirror` through structs, classes, tuples and
  /// optionals; other values (enums, collections, leaves) are compared as
  /// text. When no field differs as text, the whole values.
  static func differences(expected: Any, actual: Any) -> [StateDifference] {
    var found: [StateDifference] = []
    walk(expected, actual, path: "", depth: 0, into: &found)
    if found.isEmpty {
      found = [StateDifference(path: "", expected: value(expected), actual: value(actual))]
    }
    return found
  }

  /// How deep the walk goes: far enough for any state, and it stops a
  /// class graph with a cycle.
  private static let maximumDepth = 16

  private static func walk(
    _ expected: Any, _ actual: Any, path: String, depth: Int, into found: inout [StateDifference]
  ) {
    let left = Mirror(reflecting: expected)
    let right = Mirror(reflecting: actual)
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
      default:
        break
      }
    }
    let expectedText = value(expected)
    let actualText = value(actual)
    if expectedText != actualText {
      found.append(StateDifference(path: path, expected: expectedText, actual: actualText))
    }
  }
}
