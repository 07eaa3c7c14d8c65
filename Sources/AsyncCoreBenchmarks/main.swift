// The benchmark's entry point. Measurements run on detached tasks (see
// `runInterleaved`); this top-level code only sequences them and reports.

// A child process of the "inspect" family: one inspector command, then out
// (InspectBenchmarks+Child.swift).
if CommandLine.arguments.dropFirst().first == inspectChildArgument {
  inspectChildMain(Array(CommandLine.arguments.dropFirst(2)))
}
// A child of the journal family: open a durable core on a journal, report
// its memory (JournalBaselineBenchmarks+RecoveryMemory.swift).
if CommandLine.arguments.dropFirst().first == recoveryChildArgument {
  await recoveryChildMain(Array(CommandLine.arguments.dropFirst(2)))
}

let options = Options(arguments: CommandLine.arguments)
let clock = ContinuousClock()
let started = clock.now
let report = Report()
let machine = Machine.current()

print("# AsyncCore benchmarks\(options.quick ? " (--quick: a smoke run; rough figures)" : "")")
print("\n\(machine.cpu), \(machine.cores) cores; \(machine.toolchain)")
print("\(options.rounds) interleaved rounds per figure; median (min – max).")

// Memory first: figures taken after other benchmarks freed memory would be
// flattered by pages malloc already holds.
if options.includes("memory") { await memoryFootprint(options: options, report: report) }
if options.includes("scopes") { await scopeCost(options: options, report: report) }
if options.includes("composition") { await compositionCost(options: options, report: report) }
if options.includes("dispatch") { await dispatchThroughput(options: options, report: report) }
if options.includes("fan-out") { await fanOutLatency(options: options, report: report) }
if options.includes("executor") { await executorFanOut(options: options, report: report) }
if options.includes("subscribers") { await subscriberFanOut(options: options, report: report) }
if options.includes("sustained") { await sustainedFanOut(options: options, report: report) }
if options.includes("selectors") { await selectorCost(options: options, report: report) }
if options.includes("effects") { await effectThroughput(options: options, report: report) }
// "journal baselines" contains "journal": either filter runs the family.
if options.includes(JournalPart.baselines) { await journalCost(options: options, report: report) }
if options.includes("inspect") { await inspectCost(options: options, report: report) }
if options.includes("entities") { await entityCost(options: options, report: report) }
// Last: its floods grow the heap by hundreds of megabytes.
if options.includes("load") { await underLoad(options: options, report: report) }

report.printTargets()
let duration = (clock.now - started).seconds
print("\nTotal time: \(formatDuration(duration))")
if let path = options.markdownPath {
  write(report.markdown(machine: machine, options: options, duration: duration), to: path)
}
if let path = options.jsonPath { write(report.json(machine: machine), to: path) }
