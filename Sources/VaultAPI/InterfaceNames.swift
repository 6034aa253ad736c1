/// Names for generated types that several methods share (the generator gives one parameter list
/// one type, named after the first method that declares it).
extension VaultInterface {
    /// The `service` and `account` of an item call (Retrieve, Delete).
    public typealias ItemName = Retrieve.Request
}

extension SessionInterface {
    /// The `service` and `account` of a login call (AutoLogin, Refresh, Logout, Status).
    public typealias LoginName = AutoLogin.Request
    /// The reply of AutoLogin and Refresh: the outcome, the grant when there is a usable token,
    /// and the reason when there is not.
    public typealias LoginOutcome = AutoLogin.Reply
}
