import Testing

/// Every suite in this target starts real daemon processes and talks to them with blocking calls:
/// they run one test at a time, so they never occupy more than one of the cooperative threads
/// the rest of the test process needs.
@Suite(.serialized, .timeLimit(.minutes(20))) enum DaemonSuite {}
