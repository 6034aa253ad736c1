/// How long a session call (AutoLogin, Refresh) may take, on both ends of the socket, from one place.
///
/// The daemon answers within ``daemonAnswer``: a refresh that takes longer (another daemon's lease
/// to wait out, then a slow provider) goes on in the daemon, and its caller is answered "offline:
/// ask again", which the next call finds done. A client waits ``clientWait``, longer, so it hears
/// the daemon's answer — "ask again", or a login ended in doubt — rather than giving up first with
/// "the daemon did not answer in time", which tells it nothing about the login.
///
/// Both are real time: the client's wait is, and the daemon's bound exists to come before it.
public enum SessionDeadlines {
    /// The longest a daemon takes to answer AutoLogin or Refresh.
    public static let daemonAnswer: Duration = .seconds(60)
    /// How long a client waits for a session call's answer: the daemon's bound and a margin for a
    /// loaded machine.
    public static let clientWait: Duration = daemonAnswer + .seconds(15)
}
