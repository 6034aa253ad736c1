/// Messages about a secret's input that the lean front and the full CLI give word for word.
public enum SecretText {
    /// `store` with nothing on standard input (a pipe that gave nothing, `< /dev/null`).
    public static let empty = "the secret is empty (nothing came on standard input); nothing was stored. Pipe it: `printf %s \"$TOKEN\" | sortedvault store SERVICE ACCOUNT`"
}
