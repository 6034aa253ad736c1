// The varlink protocol layer: see VarlinkServer.
