import CLICore

/// Where sortedvault keeps its files: the CLI core's paths, which the daemon uses too, so both
/// sides work them out the same way (``CLIPaths``, ``CLILocation``).
public typealias VaultPaths = CLIPaths
