"""The engine: a separate process that runs passes and builds, and the client that talks to it."""
