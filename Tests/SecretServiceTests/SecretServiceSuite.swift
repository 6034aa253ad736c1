import Testing

/// Every suite here talks to real keyrings: the in-process ones share ``SharedKeyring`` (whose lock
/// state some tests change), so they run one test at a time.
@Suite(.serialized, .timeLimit(.minutes(20))) enum SecretServiceSuite {}
