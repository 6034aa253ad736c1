// Access policy: see Policy.
