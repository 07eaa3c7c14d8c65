import Testing

extension Trait where Self == TimeLimitTrait {
  /// The time limit of every suite: a hang detector, not a speed target.
  ///
  /// A wait that never ends fails its test here instead of holding the run.
  /// It is generous because CI runs the whole suite in parallel under
  /// ThreadSanitizer, where a test that takes two seconds alone can take a
  /// minute behind the stress tests (`Task.yield()` then waits behind every
  /// job they queue); speed is judged by the benchmark, never here.
  static var hangDetector: Self { .timeLimit(.minutes(5)) }
}
