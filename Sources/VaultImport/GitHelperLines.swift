/// git's configured credential helpers, as `git config --get-all credential.helper` prints them: the
/// `store --file PATH` ones name more files to import.
///
/// ```swift
/// let run = GitHelperLines.configArguments(environment: env)   // ["git", "config", "--get-all", "credential.helper"]
/// GitHelperLines.storeFiles(["store --file ~/.my-credentials", "cache"], home: "/home/ada")
/// // ["/home/ada/.my-credentials"]
/// ```
public enum GitHelperLines {
    /// The command that lists the helpers. With `GIT_CONFIG` set, git reads only that file (as
    /// git-config(1) says); it is passed as `--file` so the caller's environment cannot differ.
    public static func configArguments(environment: [String: String]) -> [String] {
        if let file = environment["GIT_CONFIG"], !file.isEmpty {
            return ["git", "config", "--file", file, "--get-all", "credential.helper"]
        }
        return ["git", "config", "--get-all", "credential.helper"]
    }

    /// The `--file` paths of `store` helpers (`store`, `credential-store`, or a path to
    /// `git-credential-store`), split as the shell git runs them with would (quotes, backslashes);
    /// `~/` is the home directory. `!` shell helpers and other helpers are not guessed at. An empty
    /// line resets the list, as git does.
    public static func storeFiles(_ lines: [String], home: String) -> [String] {
        var files: [String] = []
        for line in lines {
            let words = shellWords(line)
            guard let first = words.first else { files.removeAll(); continue }
            guard !line.hasPrefix("!"),
                  first == "store" || first == "credential-store" || first.hasSuffix("/git-credential-store") else { continue }
            var index = 1
            while index < words.count {
                let word = words[index]
                if word == "--file", index + 1 < words.count {
                    files.append(expanded(words[index + 1], home: home))
                    index += 1
                } else if word.hasPrefix("--file=") {
                    files.append(expanded(String(word.dropFirst("--file=".count)), home: home))
                }
                index += 1
            }
        }
        return files
    }

    static func expanded(_ path: String, home: String) -> String {
        path == "~" ? home : path.hasPrefix("~/") ? home + path.dropFirst() : path
    }

    /// Words as `sh` splits them, without expansion: single quotes, double quotes, backslashes.
    static func shellWords(_ line: String) -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var quote: Character?
        var escaped = false
        for character in line {
            if escaped { current.append(character); escaped = false; continue }
            if let open = quote {
                if character == open { quote = nil } else if character == "\\" && open == "\"" { escaped = true } else { current.append(character) }
                continue
            }
            switch character {
            case "\\": escaped = true; inWord = true
            case "'", "\"": quote = character; inWord = true
            case " ", "\t":
                if inWord { words.append(current); current = ""; inWord = false }
            default: current.append(character); inWord = true
            }
        }
        if inWord { words.append(current) }
        return words
    }
}
